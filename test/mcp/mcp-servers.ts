import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from '../helpers/process';

/** The MCP servers the tests run: npm's reference servers (devDependencies) and our own small one. */
export const EVERYTHING_SERVER = path.join(REPO_ROOT, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
export const FILESYSTEM_SERVER = path.join(REPO_ROOT, 'node_modules/@modelcontextprotocol/server-filesystem/dist/index.js');
export const TEST_SERVER = path.join(REPO_ROOT, 'test/fakes/mcp-test-server.mjs');

/** The pids our test server wrote (one line per start) in its MCP_TEST_DIR. */
export function testServerPids(dir: string): number[] {
  const file = path.join(dir, 'pids');
  return existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean).map(Number) : [];
}

/** The calls our test server received (`<tool> <arguments JSON>` per line). */
export function testServerCalls(dir: string): string[] {
  const file = path.join(dir, 'calls.log');
  return existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : [];
}

export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Polls `condition` every 50 ms until it holds (a process's end is observed, not timed). */
export async function eventually(condition: () => boolean | Promise<boolean>, what: string, limitMs = 15_000): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`still not true after ${limitMs} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
