import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import pino from 'pino';
import { mcpSchema, type McpConfig } from '../../src/config/mcp-schema';
import { MemoryDefinitionPins } from '../../src/mcp/definition-pins';
import { McpHub } from '../../src/mcp/mcp-hub';
import { MCP_OUTPUT_LIMIT_BYTES } from '../../src/mcp/mcp-tool';
import { LogCapture } from '../helpers/log-capture';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir';
import { EVERYTHING_SERVER, FILESYSTEM_SERVER, TEST_SERVER, eventually, isRunning, testServerCalls, testServerPids } from './mcp-servers';

jest.setTimeout(60_000);

const hubs: McpHub[] = [];
afterAll(async () => {
  await Promise.all(hubs.map((hub) => hub.close()));
  removeTempDirs();
});

function startHub(servers: Record<string, unknown>, logs = new LogCapture()): McpHub {
  const config: McpConfig = mcpSchema.parse({ servers });
  const hub = new McpHub({
    config,
    logger: pino({ level: 'debug' }, logs),
    pins: new MemoryDefinitionPins(),
    cwd: process.cwd(),
    reservedNames: ['current_time'],
  });
  hubs.push(hub);
  hub.start();
  return hub;
}

async function ready(hub: McpHub, server: string): Promise<void> {
  await hub.prepare([`${server}.*`]);
  await eventually(
    () => hub.servers().find((view) => view.name === server)?.state === 'ready' && hub.list().some((tool) => tool.source.server === server),
    `${server} ready`,
  );
}

const context = {
  sessionId: 'test',
  get signal() {
    return new AbortController().signal;
  },
};

describe('npm reference servers', () => {
  it('server-everything over stdio: lists its tools as <server>__<tool> and echo answers', async () => {
    const hub = startHub({ everything: { command: process.execPath, args: [EVERYTHING_SERVER] } });
    await ready(hub, 'everything');
    expect(hub.list().filter((tool) => tool.schemaProblem !== null)).toEqual([]);
    const echo = hub.get('everything__echo')!;
    expect(echo.source).toEqual({ server: 'everything', tool: 'echo' });
    expect(echo.requiresConfirmation).toBe(true); // confirm: always by default
    expect(echo.sideEffects).toBe(true); // recorded by tool_call_id, never run twice
    expect(hub.validate('everything__echo', '{"message": 1}')).toMatchObject({ ok: false });
    await expect(echo.run({ message: 'hello' }, context)).resolves.toBe('Echo: hello');
    const sum = await hub.get('everything__get-sum')!.run({ a: 2, b: 3 }, context);
    expect(String(sum)).toContain('5');
  });

  it('server-everything over Streamable HTTP', async () => {
    const port = await freePort();
    const child = spawn(process.execPath, [EVERYTHING_SERVER, 'streamableHttp'], {
      env: { ...process.env, PORT: String(port) },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    try {
      await new Promise<void>((resolve) => child.stderr.on('data', (chunk: Buffer) => chunk.toString().includes('listening') && resolve()));
      const hub = startHub({ web: { url: `http://127.0.0.1:${port}/mcp`, headers: { 'X-Test': 'a secret value' } } });
      await ready(hub, 'web');
      expect(hub.servers()[0]).toMatchObject({ name: 'web', transport: 'http', state: 'ready' });
      await expect(hub.get('web__echo')!.run({ message: 'over http' }, context)).resolves.toBe('Echo: over http');
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('server-everything over legacy HTTP+SSE: tried when Streamable HTTP is refused', async () => {
    const port = await freePort();
    const child = spawn(process.execPath, [EVERYTHING_SERVER, 'sse'], { env: { ...process.env, PORT: String(port) }, stdio: ['ignore', 'ignore', 'pipe'] });
    try {
      await new Promise<void>((resolve) => child.stderr.on('data', (chunk: Buffer) => chunk.toString().includes('running on port') && resolve()));
      const hub = startHub({ legacy: { url: `http://127.0.0.1:${port}/sse` } });
      await ready(hub, 'legacy');
      await expect(hub.get('legacy__echo')!.run({ message: 'over sse' }, context)).resolves.toBe('Echo: over sse');
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('server-filesystem confined to a temp dir, with a tools filter', async () => {
    const root = makeTempDir();
    writeFileSync(path.join(root, 'notes.txt'), 'the meeting notes');
    const hub = startHub({
      files: { command: process.execPath, args: [FILESYSTEM_SERVER, root], tools: { include: ['read_*', 'list_*'], exclude: ['read_media_file'] } },
    });
    await ready(hub, 'files');
    const names = hub.list().map((tool) => tool.source.tool);
    expect(hub.list().filter((tool) => tool.schemaProblem !== null)).toEqual([]);
    expect(names).toContain('read_text_file');
    expect(names).toContain('list_directory');
    expect(names).not.toContain('write_file');
    expect(names).not.toContain('read_media_file');
    await expect(hub.get('files__read_text_file')!.run({ path: path.join(root, 'notes.txt') }, context)).resolves.toBe('the meeting notes');
    await expect(hub.get('files__read_text_file')!.run({ path: '/etc/hostname' }, context)).rejects.toThrow(/error/i);
  });
});

describe('our test server: failures become tool errors', () => {
  let dir: string;
  let hub: McpHub;
  let logs: LogCapture;
  beforeAll(async () => {
    dir = makeTempDir();
    logs = new LogCapture();
    hub = startHub({ test: { command: process.execPath, args: [TEST_SERVER], env: { MCP_TEST_DIR: dir }, timeout_s: 2, confirm: 'read_only_auto' } }, logs);
    await ready(hub, 'test');
  });

  it('read_only_auto: a read-only tool runs at once, a destructive or unannotated one asks', () => {
    expect(hub.get('test__echo')!.requiresConfirmation).toBe(false);
    expect(hub.get('test__delete_everything')!.requiresConfirmation).toBe(true);
    expect(hub.get('test__slow')!.requiresConfirmation).toBe(true);
  });

  it('a call past timeout_s is abandoned with a clear error', async () => {
    await expect(hub.get('test__hang')!.run({}, context)).rejects.toThrow('did not answer within 2 s');
  });

  it('isError from the server is a tool error with its text', async () => {
    await expect(hub.get('test__fail')!.run({}, context)).rejects.toThrow('reported an error: the thing is broken');
  });

  it('output over 100 KB is cut with a note', async () => {
    const text = String(await hub.get('test__big')!.run({ bytes: MCP_OUTPUT_LIMIT_BYTES + 5_000 }, context));
    expect(text.startsWith('x'.repeat(1000))).toBe(true);
    expect(text).toContain(`[cut: the tool's output was ${MCP_OUTPUT_LIMIT_BYTES + 5_000} bytes`);
  });

  it('refuses sampling requests from the server', async () => {
    await expect(hub.get('test__sample')!.run({}, context)).resolves.toMatch(/^sampling refused: /);
  });

  it("logs the server's stderr at debug with its name", () => {
    const started = logs.entries().find((entry) => String(entry.msg).startsWith('test server') && entry.msg !== undefined);
    expect(started).toMatchObject({ level: 20, mcp_server: 'test', msg: expect.stringMatching(/^test server \d+ started$/) });
  });

  it('a crash mid-call is a tool error; the server is restarted with backoff and works again', async () => {
    const before = testServerPids(dir);
    await expect(hub.get('test__crash')!.run({}, context)).rejects.toThrow(/stopped during the call|closed/);
    await eventually(() => testServerPids(dir).length > before.length && hub.servers()[0]!.state === 'ready', 'restarted');
    expect(hub.servers()[0]!.restarts).toBeGreaterThanOrEqual(1);
    await expect(hub.get('test__echo')!.run({ message: 'back' }, context)).resolves.toBe('Test echo: back');
    expect(isRunning(before[before.length - 1]!)).toBe(false);
  });

  it('a changed definition is withheld until approved; close reaps the process', async () => {
    expect(hub.get('test__shifty')!.availability()).toEqual({ ok: true });
    writeFileSync(path.join(dir, 'description.txt'), 'Now it also deletes your files.');
    await hub.restart('test');
    await eventually(() => hub.get('test__shifty')?.changed === true, 'shifty changed');
    expect(hub.get('test__shifty')!.availability()).toMatchObject({ ok: false, reason: expect.stringContaining('changed') });
    expect(hub.servers()[0]!.tools.find((tool) => tool.name === 'shifty')).toMatchObject({ changed: true });
    expect(hub.get('test__echo')!.changed).toBe(false);
    const approved = await hub.approve('test', 'shifty', 'admin');
    expect(approved).toMatchObject({ name: 'shifty', changed: false });
    expect(approved.previous_hash).not.toBe(approved.hash);
    expect(hub.get('test__shifty')!.availability()).toEqual({ ok: true });
    expect(testServerCalls(dir).some((line) => line.startsWith('shifty'))).toBe(false);

    const pids = testServerPids(dir);
    await hub.close();
    expect(hub.servers()[0]!.state).toBe('stopped');
    await eventually(() => !isRunning(pids[pids.length - 1]!), 'server process reaped');
  });
});

it('a server that cannot start is failed with its error, and retried', async () => {
  const hub = startHub({ broken: { command: '/nonexistent/mcp-server', timeout_s: 2 } });
  await eventually(() => hub.servers()[0]!.state === 'failed', 'failed');
  expect(hub.servers()[0]!.last_error).toBeTruthy();
  expect(hub.failedServers()).toEqual(['broken']);
  expect(hub.get('broken__anything')).toBeUndefined();
  await eventually(() => hub.servers()[0]!.restarts >= 1, 'retried after the backoff');
});

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}
