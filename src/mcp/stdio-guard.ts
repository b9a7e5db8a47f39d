/**
 * A stdio MCP server is started under a small guard process (`node -e GUARD -- command args…`)
 * so it never outlives the hub process that started it, however that process ends:
 *
 * - the guard starts the server in a process group of its own and passes the hub's stdin on;
 * - when its stdin ends — the hub closed it (shutdown), or the hub died (SIGKILL closes the pipe) —
 *   it closes the server's stdin, waits `GRACE_MS`, then sends SIGTERM to the whole group, and
 *   SIGKILL after another grace;
 * - a SIGTERM or SIGINT to the guard goes to the group the same way;
 * - it also notices being orphaned (its parent changed) in case the pipe stays open elsewhere;
 * - it exits with the server's exit code.
 *
 * The server's stdout and stderr are the guard's own (inherited): the protocol is not copied.
 * Plain CommonJS in a string, so it runs the same from `src/` under jest and from `dist/`.
 */
export const STDIO_GUARD_GRACE_MS = 2_000;

export const STDIO_GUARD_SOURCE = `
const { spawn } = require('node:child_process');
const GRACE_MS = ${STDIO_GUARD_GRACE_MS};
const [command, ...args] = process.argv.slice(1);
const parent = process.ppid;
const child = spawn(command, args, { stdio: ['pipe', 'inherit', 'inherit'], detached: true });
let ending = false;
const signalGroup = (signal) => { try { process.kill(-child.pid, signal); } catch {} };
const end = () => {
  if (ending) return;
  ending = true;
  try { child.stdin.end(); } catch {}
  setTimeout(() => { signalGroup('SIGTERM'); setTimeout(() => signalGroup('SIGKILL'), GRACE_MS).unref(); }, GRACE_MS).unref();
};
child.stdin.on('error', () => {});
child.on('error', (error) => { process.stderr.write('cannot start ' + command + ': ' + error.message + '\\n'); process.exit(127); });
child.on('exit', (code, signal) => { signalGroup('SIGKILL'); process.exit(code ?? (signal ? 1 : 0)); });
process.stdin.on('data', (chunk) => { try { child.stdin.write(chunk); } catch {} });
process.stdin.on('end', end);
process.stdin.on('error', end);
for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP']) process.on(signal, () => { end(); signalGroup('SIGTERM'); });
setInterval(() => { if (process.ppid !== parent) end(); }, 1000).unref();
`;

/** The command line that runs `command args…` under the guard. */
export function guardedCommand(command: string, args: readonly string[]): { command: string; args: string[] } {
  return { command: process.execPath, args: ['-e', STDIO_GUARD_SOURCE, '--', command, ...args] };
}
