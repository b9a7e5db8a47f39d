/** Longest tool name the model APIs accept (OpenAI and Anthropic: 64). */
export const MODEL_TOOL_NAME_MAX = 64;

/**
 * The name the model sees for a server's tool: `<server>__<tool>`, every character outside
 * `[A-Za-z0-9_-]` replaced by `_`, at most 64 characters, unique among `taken` (a clash gets
 * `_2`, `_3`, … at the end).
 */
export function modelToolName(server: string, tool: string, taken: ReadonlySet<string>): string {
  const base = `${server}__${tool}`.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, MODEL_TOOL_NAME_MAX);
  if (!taken.has(base)) return base;
  for (let suffix = 2; ; suffix += 1) {
    const tail = `_${suffix}`;
    const candidate = `${base.slice(0, MODEL_TOOL_NAME_MAX - tail.length)}${tail}`;
    if (!taken.has(candidate)) return candidate;
  }
}
