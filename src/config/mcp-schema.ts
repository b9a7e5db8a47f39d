import { z } from 'zod';

/**
 * `mcp.servers` (docs/guides/mcp-tools.md): the MCP servers whose tools workflows may pin. Declared
 * here only — never through the API — because a stdio server is a command this machine runs.
 * `${VAR}` in `args`, `env`, `url` and `headers` is replaced from the environment at startup
 * (`mcp-expand.ts`); header and env values are secrets, never logged nor shown.
 */

/** A server's name: the prefix of its tools (`<server>.<tool>` in a tool_list, `<server>__<tool>` to the model). */
export const MCP_SERVER_NAME = /^[a-z0-9][a-z0-9_-]{0,31}$/;

/** Longest time one MCP call may take, in seconds. */
export const MCP_TIMEOUT_MAX_S = 3600;

const glob = z.string().min(1).max(200);

const common = {
  /** Globs over the server's tool names: which of its tools the hub takes at all. */
  tools: z
    .strictObject({
      include: z.array(glob).default(['*']),
      exclude: z.array(glob).default([]),
    })
    .prefault({}),
  /** always (default): every call asks; never: no call asks; read_only_auto: a tool that declares readOnlyHint (and not destructiveHint) runs at once. */
  confirm: z.enum(['always', 'never', 'read_only_auto']).default('always'),
  /** Tool-name globs that run without asking, whatever `confirm` says. */
  auto_approve: z.array(glob).default([]),
  /** Seconds one call (and the server's start) may take before it counts as failed. */
  timeout_s: z.number().int().positive().max(MCP_TIMEOUT_MAX_S).default(30),
};

const stdioServer = z.strictObject({
  ...common,
  /** The program to run (stdio transport); its stdin and stdout carry the protocol. */
  command: z.string().min(1),
  args: z.array(z.string()).default([]),
  /** Variables added to the server's environment (secrets: never logged). */
  env: z.record(z.string().min(1), z.string()).default({}),
  /** Working directory of the server; relative to the hub's. Null: the hub's. */
  cwd: z.string().min(1).nullable().default(null),
});

const httpServer = z.strictObject({
  ...common,
  /** A Streamable HTTP endpoint (a legacy SSE server is tried when it refuses Streamable HTTP). */
  url: z.url({ protocol: /^https?$/ }),
  /** Headers sent with every request (secrets: never logged). */
  headers: z.record(z.string().min(1), z.string()).default({}),
});

/** A server is stdio (`command`) or Streamable HTTP (`url`): checked against that one schema, so its errors are its own. */
const server = z.looseObject({}).transform((value, context): z.infer<typeof stdioServer> | z.infer<typeof httpServer> => {
  const stdio = 'command' in value;
  if (stdio === 'url' in value) {
    context.addIssue({ code: 'custom', message: 'a server needs either `command` (stdio) or `url` (Streamable HTTP), not both' });
    return z.NEVER;
  }
  const result = (stdio ? stdioServer : httpServer).safeParse(value);
  if (result.success) return result.data;
  for (const issue of result.error.issues) {
    const path = issue.code === 'unrecognized_keys' ? [...issue.path, issue.keys[0]!] : issue.path;
    const message = issue.code === 'unrecognized_keys' ? `unknown key for a ${stdio ? 'stdio' : 'Streamable HTTP'} server (check the spelling)` : issue.message;
    context.addIssue({ code: 'custom', message, path: path as (string | number)[] });
  }
  return z.NEVER;
});

export const mcpSchema = z.strictObject({
  servers: z
    .record(z.string().regex(MCP_SERVER_NAME), server, {
      error: (issue) => (issue.code === 'invalid_key' ? 'not a server name: 1–32 of a-z, 0-9, _ and -, starting with a letter or digit' : undefined),
    })
    .default({}),
});

export type McpConfig = z.infer<typeof mcpSchema>;
export type McpServerConfig = z.infer<typeof server>;
export type McpStdioServerConfig = z.infer<typeof stdioServer>;
export type McpHttpServerConfig = z.infer<typeof httpServer>;
export type McpConfirmRule = McpServerConfig['confirm'];
