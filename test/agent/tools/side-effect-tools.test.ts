import { mkdirSync, readFileSync, symlinkSync, writeFileSync, existsSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { makeTempDir, removeTempDirs } from '../../helpers/temp-dir';
import { call, context, refusal, registry } from './tool-harness';

afterAll(removeTempDirs);

describe('web_search', () => {
  let server: http.Server;
  let endpoint: string;
  const seen: { url: string; token: string | undefined }[] = [];

  beforeAll(async () => {
    server = http.createServer((request, response) => {
      seen.push({ url: request.url ?? '', token: request.headers['x-subscription-token'] as string | undefined });
      if (request.headers['x-subscription-token'] !== 'search-key') {
        response.writeHead(401, { 'content-type': 'application/json' });
        response.end('{"error":"bad token search-key-echo"}');
        return;
      }
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(
        JSON.stringify({
          web: {
            results: [
              { title: 'Switchboard', url: 'https://example.test/a', description: 'A hub.' },
              { title: 'Other', url: 'https://example.test/b', description: 'More.' },
            ],
          },
        }),
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}/res/v1/web/search`;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  it('is unavailable without a key, and refuses to run', async () => {
    const tools = registry({ web_search: { endpoint } });
    expect(tools.get('web_search')!.availability().ok).toBe(false);
    expect((await refusal(call(tools, 'web_search', '{"query":"x"}'))).message).toBe('web_search is not configured (no search API key).');
  });

  it('queries the configured endpoint with the key and returns titles, URLs and snippets', async () => {
    const tools = registry({ web_search: { endpoint, api_key: 'search-key' } });
    const result = await call(tools, 'web_search', '{"query":"chat ops hub","count":1}');
    expect(result).toEqual({ query: 'chat ops hub', results: [{ title: 'Switchboard', url: 'https://example.test/a', snippet: 'A hub.' }] });
    expect(seen.at(-1)).toEqual({ url: '/res/v1/web/search?q=chat+ops+hub&count=1', token: 'search-key' });
  });

  it('reports an HTTP error without the upstream body', async () => {
    const error = await refusal(call(registry({ web_search: { endpoint, api_key: 'wrong' } }), 'web_search', '{"query":"x"}'));
    expect(error.message).toBe('The search API answered HTTP 401.');
  });

  it('limits count by schema', () => {
    expect(registry().validate('web_search', '{"query":"x","count":50}')).toEqual({
      ok: false,
      error: 'Invalid arguments for web_search: count must be <= 5.',
    });
  });
});

describe('write_file', () => {
  function setup(overrides: Record<string, unknown> = {}) {
    const dataDir = makeTempDir();
    const workspaceDir = path.join(dataDir, 'workspace');
    return { dataDir, workspaceDir, tools: registry({ write_file: overrides }, { workspaceDir }) };
  }

  it('writes a file inside the workspace, creating directories and replacing an existing file', async () => {
    const { workspaceDir, tools } = setup();
    expect(await call(tools, 'write_file', JSON.stringify({ path: 'notes/./plan.md', content: 'v1' }))).toEqual({ path: 'notes/plan.md', bytes: 2 });
    await call(tools, 'write_file', JSON.stringify({ path: 'notes/plan.md', content: 'héllo' }));
    expect(readFileSync(path.join(workspaceDir, 'notes', 'plan.md'), 'utf8')).toBe('héllo');
  });

  it.each([
    ['/etc/passwd', 'is absolute'],
    ['C:\\Windows\\x.txt', 'is absolute'],
    ['../outside.txt', 'contains ".."'],
    ['notes/../../outside.txt', 'contains ".."'],
    ['a\\..\\..\\outside.txt', 'contains ".."'],
    ['.', 'does not name a file'],
  ])('refuses %s', async (target, reason) => {
    const { dataDir, tools } = setup();
    const error = await refusal(call(tools, 'write_file', JSON.stringify({ path: target, content: 'x' })));
    expect(error.name).toBe('ToolError');
    expect(error.message).toContain(reason);
    expect(existsSync(path.join(dataDir, 'outside.txt'))).toBe(false);
  });

  it('refuses to write through a symbolic link to a directory outside', async () => {
    const { workspaceDir, tools } = setup();
    const outside = makeTempDir();
    mkdirSync(workspaceDir, { recursive: true });
    symlinkSync(outside, path.join(workspaceDir, 'escape'));
    const error = await refusal(call(tools, 'write_file', JSON.stringify({ path: 'escape/owned.txt', content: 'x' })));
    expect(error.message).toBe('"escape/owned.txt" goes through a symbolic link; write_file does not follow links.');
    expect(existsSync(path.join(outside, 'owned.txt'))).toBe(false);
  });

  it('refuses to write to a symbolic link pointing at a file outside', async () => {
    const { workspaceDir, tools } = setup();
    const victim = path.join(makeTempDir(), 'victim.txt');
    writeFileSync(victim, 'original');
    mkdirSync(workspaceDir, { recursive: true });
    symlinkSync(victim, path.join(workspaceDir, 'link.txt'));
    const error = await refusal(call(tools, 'write_file', JSON.stringify({ path: 'link.txt', content: 'overwritten' })));
    expect(error.message).toBe('"link.txt" is a symbolic link; write_file does not follow links.');
    expect(readFileSync(victim, 'utf8')).toBe('original');
  });

  it('refuses content over the size cap', async () => {
    const { tools } = setup({ max_bytes: 4 });
    expect((await refusal(call(tools, 'write_file', JSON.stringify({ path: 'a.txt', content: 'héllo' })))).message).toBe(
      'The content is 6 bytes; write_file accepts at most 4.',
    );
  });
});

describe('run_command', () => {
  it('is refused when disabled (the default), even if called directly', async () => {
    const workspaceDir = path.join(makeTempDir(), 'workspace');
    const tool = registry({}, { workspaceDir }).get('run_command')!;
    expect((await refusal(tool.run({ command: 'touch ran' }, context()))).message).toBe('run_command is disabled on this hub.');
    expect(existsSync(path.join(workspaceDir, 'ran'))).toBe(false);
  });

  it('runs in the workspace, without the hub’s environment, and reports exit code and output', async () => {
    const workspaceDir = path.join(makeTempDir(), 'workspace');
    const tools = registry({ run_command: { enabled: true } }, { workspaceDir });
    // A variable of the hub's own environment (where its secrets live) must not reach the command.
    process.env.SWITCHBOARD_TEST_CANARY = 'leaked';
    try {
      const result = await call(
        tools,
        'run_command',
        JSON.stringify({ command: 'pwd; echo "canary=${SWITCHBOARD_TEST_CANARY:-unset}"; echo oops >&2; exit 3' }),
      );
      expect(result).toEqual({ exit_code: 3, signal: null, stdout: `${workspaceDir}\ncanary=unset\n`, stderr: 'oops\n', timed_out: false, truncated: false });
    } finally {
      delete process.env.SWITCHBOARD_TEST_CANARY;
    }
  });

  it('kills a command that outlives its timeout', async () => {
    const workspaceDir = path.join(makeTempDir(), 'workspace');
    const tools = registry({ run_command: { enabled: true, timeout_s: 1 } }, { workspaceDir });
    const started = Date.now();
    const result = await call(tools, 'run_command', JSON.stringify({ command: 'echo started; sleep 30' }));
    expect(result).toMatchObject({ exit_code: null, signal: 'SIGKILL', stdout: 'started\n', timed_out: true });
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('caps its output', async () => {
    const workspaceDir = path.join(makeTempDir(), 'workspace');
    const tools = registry({ run_command: { enabled: true, max_output_bytes: 10 } }, { workspaceDir });
    expect(await call(tools, 'run_command', JSON.stringify({ command: 'printf "%0100d" 0' }))).toMatchObject({
      stdout: '0000000000',
      truncated: true,
      exit_code: 0,
    });
  });

  it('stops the command when the turn is cancelled', async () => {
    const workspaceDir = path.join(makeTempDir(), 'workspace');
    const tools = registry({ run_command: { enabled: true } }, { workspaceDir });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 200);
    const started = Date.now();
    const result = await call(tools, 'run_command', JSON.stringify({ command: 'sleep 30' }), context(controller.signal));
    expect(result).toMatchObject({ signal: 'SIGKILL', timed_out: false });
    expect(Date.now() - started).toBeLessThan(3000);
  });
});
