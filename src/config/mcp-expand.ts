import { ConfigError } from './config-error';

const VARIABLE = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/**
 * Replaces `${VAR}` in the string values of `mcp.servers.*` (`args`, `env`, `url`, `headers`,
 * `command`, `cwd`) by the environment's value. A variable that is not set stops startup naming
 * the key and the variable, never a value.
 */
export function expandMcpVariables(tree: Record<string, unknown>, env: Record<string, string | undefined>): void {
  const servers = (tree.mcp as Record<string, unknown> | undefined)?.servers;
  if (servers === null || typeof servers !== 'object') return;
  for (const [name, server] of Object.entries(servers as Record<string, unknown>)) {
    if (server === null || typeof server !== 'object') continue;
    expandIn(server as Record<string, unknown>, ['mcp', 'servers', name], env);
  }
}

const EXPANDED_KEYS = new Set(['command', 'args', 'env', 'cwd', 'url', 'headers']);

function expandIn(node: Record<string, unknown>, at: string[], env: Record<string, string | undefined>): void {
  for (const [key, value] of Object.entries(node)) {
    if (!EXPANDED_KEYS.has(key)) continue;
    node[key] = expandValue(value, [...at, key], env);
  }
}

function expandValue(value: unknown, at: string[], env: Record<string, string | undefined>): unknown {
  if (typeof value === 'string') return expandString(value, at, env);
  if (Array.isArray(value)) return value.map((item, index) => expandValue(item, [...at, String(index)], env));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, expandValue(item, [...at, key], env)]));
  }
  return value;
}

function expandString(text: string, at: string[], env: Record<string, string | undefined>): string {
  return text.replace(VARIABLE, (_match, name: string) => {
    const value = env[name];
    if (value === undefined) throw new ConfigError(`${at.join('.')}: \${${name}} is not set in the environment`);
    return value;
  });
}
