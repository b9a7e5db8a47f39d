/**
 * Globs over tool names, as `mcp.servers.*.tools`, `auto_approve` and a workflow's `<server>.*`
 * use them: `*` matches any run of characters, `?` one character, everything else itself.
 */
export function globMatches(glob: string, name: string): boolean {
  const pattern = glob
    .split('')
    .map((character) => (character === '*' ? '.*' : character === '?' ? '.' : character.replace(/[.+^${}()|[\]\\]/, '\\$&')))
    .join('');
  return new RegExp(`^${pattern}$`, 's').test(name);
}

export function matchesAny(globs: readonly string[], name: string): boolean {
  return globs.some((glob) => globMatches(glob, name));
}

/** Whether a server's `tools` filter takes this tool: included and not excluded. */
export function passesFilter(filter: { include: readonly string[]; exclude: readonly string[] }, name: string): boolean {
  return matchesAny(filter.include, name) && !matchesAny(filter.exclude, name);
}
