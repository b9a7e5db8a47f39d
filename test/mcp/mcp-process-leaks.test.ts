import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { testEnv } from '../helpers/env';
import { readyUrl, spawnService } from '../helpers/process';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir';
import { TEST_SERVER, eventually, isRunning, testServerPids } from './mcp-servers';

jest.setTimeout(60_000);

afterAll(removeTempDirs);

/** The parent pid of a process (the stdio guard of a server), read from ps. */
function parentOf(pid: number): number {
  return Number(
    execFileSync('ps', ['-o', 'ppid=', '-p', String(pid)])
      .toString()
      .trim(),
  );
}

/**
 * No stray MCP server processes: a real hub process (`dist/src/main.js`) starts a stdio server (our
 * test server, which records its pid); after the hub ends — by SIGTERM, or by SIGKILL, which gives
 * it no chance to clean up — neither the server nor its guard is left running.
 */
describe.each(['SIGTERM', 'SIGKILL'] as const)('a hub process ended by %s', (signal) => {
  it('leaves no MCP server process running', async () => {
    const dir = makeTempDir();
    const dataDir = makeTempDir();
    const configFile = path.join(dir, 'config.yaml');
    writeFileSync(
      configFile,
      `mcp:\n  servers:\n    test:\n      command: ${JSON.stringify(process.execPath)}\n      args: [${JSON.stringify(TEST_SERVER)}]\n      env: { MCP_TEST_DIR: ${JSON.stringify(dir)} }\n`,
    );
    const hub = spawnService(testEnv(dataDir, { SERVICE_CONFIG_FILE: configFile }));
    await readyUrl(hub);
    await eventually(() => testServerPids(dir).length === 1, 'the server started');
    const server = testServerPids(dir)[0]!;
    const guard = parentOf(server);
    expect(guard).not.toBe(hub.child.pid);
    expect(parentOf(guard)).toBe(hub.child.pid);

    hub.child.kill(signal);
    await hub.exited;
    await eventually(() => !isRunning(server) && !isRunning(guard), `server ${server} and guard ${guard} ended`);
    expect(testServerPids(dir)).toHaveLength(1); // ended, not restarted
  });
});
