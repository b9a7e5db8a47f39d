import net from 'node:net';
import { gzipSync } from 'node:zlib';
import { MAX_JSON_DEPTH } from '../../src/api/middleware/input-guard';
import { startService, type RunningService } from '../../src/main';
import { GENEROUS_RATE_LIMITS } from '../helpers/auth-service';
import { testEnv } from '../helpers/env';
import { jsonBody, request, type JsonResponse } from '../helpers/http';
import { LogCapture } from '../helpers/log-capture';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir';
import { registerUser, type TestUser } from '../helpers/users';
import { openSocket } from '../helpers/ws-client';

// Hostile or broken input answers 4xx in the documented envelope (decisions.md §1): never a 500.
// The real hub (built-in offline model) on an ephemeral port.

let service: RunningService;
let api: string;
let admin: TestUser;
let sessionId: string;
const logs = new LogCapture();

beforeAll(async () => {
  service = await startService({ env: testEnv(makeTempDir(), GENEROUS_RATE_LIMITS), cwd: makeTempDir(), logDestination: logs });
  api = `http://127.0.0.1:${service.port}/api/v1`;
  admin = await registerUser(api, 'root');
  sessionId = (await request(`${api}/sessions`, jsonBody({ name: 's' }, auth()))).body.data.id;
});

afterAll(async () => {
  await service.stop();
  removeTempDirs();
});

const auth = () => ({ authorization: `Bearer ${admin.token}` });
const send = (method: string, route: string, body?: unknown, headers: Record<string, string> = {}) =>
  request(`${api}${route}`, {
    method,
    headers: { ...auth(), ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });

/** The documented error envelope with this status and code. */
function expectError(response: JsonResponse, status: number, code: string): void {
  expect({ status: response.status, code: response.body?.error?.code }).toEqual({ status, code });
  expect(response.body).toMatchObject({
    data: null,
    error: { message: expect.any(String), details: expect.any(Object) },
    meta: { request_id: expect.any(String) },
  });
}

/** `{"a":{"a":…1…}}` with `levels` objects; as text, since JSON.stringify itself overflows on deep values. */
function nested(levels: number): string {
  return '{"a":'.repeat(levels) + '1' + '}'.repeat(levels);
}

/** No 500 was answered, and nothing was logged at error level, during the whole file. */
function expectNoServerErrors(): void {
  const failures = (logs.entries() as any[]).filter((entry) => entry.level === 'error' || entry.level === 50 || entry.res?.status >= 500);
  expect(failures.map((entry) => `${entry.msg} ${entry.req?.url ?? ''}`)).toEqual([]);
}

describe('NUL characters', () => {
  it('refuses NUL in a JSON string with 422 naming the field (login, register, bodies, keys)', async () => {
    const login = await request(`${api}/auth/login`, jsonBody({ username: 'a\u0000b', password: 'password123' }));
    expectError(login, 422, 'VALIDATION_ERROR');
    expect(login.body.error.details.fields).toEqual({ username: [{ code: 'invalid_characters', message: 'Must not contain NUL (U+0000) characters.' }] });
    const register = await request(`${api}/auth/register`, jsonBody({ username: 'bob', email: 'b@x.io', password: 'pass\u0000word123' }));
    expectError(register, 422, 'VALIDATION_ERROR');
    expect(Object.keys(register.body.error.details.fields)).toEqual(['password']);
    const created = await send('POST', '/sessions', { name: 'n\u0000', config: {} });
    expectError(created, 422, 'VALIDATION_ERROR');
    const message = await send('POST', `/sessions/${sessionId}/messages`, { text: 'hi', metadata: { 'k\u0000': 'v', list: ['ok', 'x\u0000'] } });
    expectError(message, 422, 'VALIDATION_ERROR');
    expect(Object.keys(message.body.error.details.fields).sort()).toEqual(['metadata.k\\u0000', 'metadata.list.1']);
    const workflow = await send('POST', '/assistant/workflows', { name: 'nul', system_prompt: 'be \u0000 kind' });
    expectError(workflow, 422, 'VALIDATION_ERROR');
    expect(Object.keys(workflow.body.error.details.fields)).toEqual(['system_prompt']);
  });

  it('refuses %00 in path ids and query parameters with 422', async () => {
    for (const [route, field] of [
      ['/sessions/%00', 'path.id'],
      ['/sessions/abc%00def/messages', 'path.id'],
      ['/assistant/workflows/%00', 'path.name'],
      ['/assistant/workflows/a%00b', 'path.name'],
      ['/knowledge/collections/%00/documents/%00', 'path.id'],
      ['/sessions?cursor=%00', 'query.cursor'],
      ['/assistant/workflows?cursor=x%00', 'query.cursor'],
    ] as const) {
      const response = await send('GET', route);
      expectError(response, 422, 'VALIDATION_ERROR');
      expect(response.body.error.details.fields[field]).toEqual([{ code: 'invalid_characters', message: 'Must not contain NUL (U+0000) characters.' }]);
    }
    expectError(await send('PUT', '/assistant/contacts/telegram::%00', { display_name: 'x' }), 422, 'VALIDATION_ERROR');
    expectError(await send('DELETE', '/assistant/workflows/%00'), 422, 'VALIDATION_ERROR');
    expectError(await send('PUT', '/assistant/binding-channels/web%00', { workflows: [] }), 422, 'VALIDATION_ERROR');
  });
});

describe('malformed paths and bodies', () => {
  it('answers 400 to bad percent-encoding in a path', async () => {
    for (const route of [
      '/sessions/%C0%AF',
      '/sessions/%E0%A4%A',
      '/assistant/workflows/%FF',
      '/assistant/contacts/%C0%AF',
      '/knowledge/collections/%C3%28/documents',
    ]) {
      const response = await send('GET', route);
      expectError(response, 400, 'BAD_REQUEST');
      expect(response.body.error.message).toBe('The request path contains invalid percent-encoding.');
    }
  });

  it(`refuses JSON nested deeper than ${MAX_JSON_DEPTH} levels with 422, and accepts ${MAX_JSON_DEPTH}`, async () => {
    const deepConfig = await send('POST', '/sessions', `{"name":"deep","config":${nested(5_000)}}`);
    expectError(deepConfig, 422, 'VALIDATION_ERROR');
    expect(deepConfig.body.error.details.fields).toEqual({
      config: [{ code: 'too_deep', message: expect.stringContaining(`more than ${MAX_JSON_DEPTH} levels`) }],
    });
    const deepMetadata = await send('POST', `/sessions/${sessionId}/messages`, `{"text":"hi","metadata":${nested(5_000)}}`);
    expectError(deepMetadata, 422, 'VALIDATION_ERROR');
    expect(Object.keys(deepMetadata.body.error.details.fields)).toEqual(['metadata']);
    expectError(await send('PATCH', `/sessions/${sessionId}`, `{"config":${nested(MAX_JSON_DEPTH)}}`), 422, 'VALIDATION_ERROR');
    const deepArray = await send('POST', '/sessions', '['.repeat(100_000) + ']'.repeat(100_000));
    expectError(deepArray, 422, 'VALIDATION_ERROR');
    expect(Object.keys(deepArray.body.error.details.fields)).toEqual(['0']); // named by its top-level member, as the validator would
    // The limit itself: the body is level 1, so metadata may hold MAX_JSON_DEPTH - 1 levels.
    const atLimit = await send('POST', `/sessions/${sessionId}/messages?sync=true`, `{"text":"hello","metadata":${nested(MAX_JSON_DEPTH - 1)}}`);
    expect(atLimit.status).toBe(200);
    const overLimit = await send('POST', `/sessions/${sessionId}/messages`, `{"text":"hello","metadata":${nested(MAX_JSON_DEPTH)}}`);
    expectError(overLimit, 422, 'VALIDATION_ERROR');
  });

  it('answers 400 to a body that does not match its Content-Encoding, and still takes real gzip', async () => {
    const garbage = await request(`${api}/sessions`, {
      method: 'POST',
      headers: { ...auth(), 'content-type': 'application/json', 'content-encoding': 'gzip' },
      body: 'this is not gzip at all',
    });
    expectError(garbage, 400, 'BAD_REQUEST');
    expect(garbage.body.error.message).toMatch(/could not be decompressed/);
    const truncated = gzipSync(JSON.stringify({ name: 'cut' })).subarray(0, 12);
    expectError(
      await request(`${api}/sessions`, {
        method: 'POST',
        headers: { ...auth(), 'content-type': 'application/json', 'content-encoding': 'gzip' },
        body: truncated,
      }),
      400,
      'BAD_REQUEST',
    );
    const real = await request(`${api}/sessions`, {
      method: 'POST',
      headers: { ...auth(), 'content-type': 'application/json', 'content-encoding': 'gzip' },
      body: gzipSync(JSON.stringify({ name: 'zipped' })),
    });
    expect(real.status).toBe(201);
    expect(real.body.data.name).toBe('zipped');
    // A small gzip that inflates past the JSON limit is refused by the inflated size.
    const bomb = gzipSync(Buffer.from(`{"name":"${'a'.repeat(4 * 1024 * 1024)}"}`));
    expect(bomb.length).toBeLessThan(10_000);
    expectError(
      await request(`${api}/sessions`, { method: 'POST', headers: { ...auth(), 'content-type': 'application/json', 'content-encoding': 'gzip' }, body: bomb }),
      413,
      'PAYLOAD_TOO_LARGE',
    );
  });
});

describe('concurrent writes', () => {
  it('two (or more) concurrent creates of one workflow name: exactly one 201, the others 409', async () => {
    const responses = await Promise.all(Array.from({ length: 6 }, () => send('POST', '/assistant/workflows', { name: 'raced', system_prompt: 'You help.' })));
    expect(responses.map((response) => response.status).sort()).toEqual([201, 409, 409, 409, 409, 409]);
    for (const response of responses.filter((r) => r.status === 409)) {
      expectError(response, 409, 'CONFLICT');
      expect(response.body.error.message).toBe('A workflow named "raced" exists already.');
    }
    const synced = await Promise.all(
      Array.from({ length: 4 }, () => send('POST', '/assistant/workflows/sync', { workflows: [{ name: 'synced', system_prompt: 'x' }] })),
    );
    expect(synced.every((response) => response.status === 200 || response.status === 409)).toBe(true);
  });

  it('concurrent contact PUTs of a new contact all succeed; the contact exists once', async () => {
    const key = 'telegram::424242';
    const responses = await Promise.all(
      Array.from({ length: 8 }, (_, index) => send('PUT', `/assistant/contacts/${encodeURIComponent(key)}`, { display_name: `name ${index}`, tags: ['vip'] })),
    );
    expect(responses.map((response) => response.status)).toEqual(Array(8).fill(200));
    const listed = await send('GET', '/assistant/contacts');
    expect(listed.body.data.items.filter((contact: { session_key: string }) => contact.session_key === key)).toHaveLength(1);
  });
});

/** Sends raw bytes and returns the status line, for requests an HTTP client refuses to send. */
function rawRequest(text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(service.port, '127.0.0.1', () => socket.write(text));
    let received = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => (received += chunk));
    socket.on('end', () => resolve(received.split('\r\n')[0]!));
    socket.on('error', reject);
    socket.setTimeout(5_000, () => {
      socket.destroy();
      reject(new Error(`no answer; got ${JSON.stringify(received)}`));
    });
  });
}

describe('WebSocket input', () => {
  const upgrade = (target: string) =>
    rawRequest(
      `GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n`,
    );

  it('answers 400 to an upgrade whose request-target does not parse', async () => {
    expect(await upgrade('//%zz')).toBe('HTTP/1.1 400 Bad Request');
    expect(await upgrade('//')).toBe('HTTP/1.1 400 Bad Request');
    expect(await upgrade('http://[::1/ws/v1/logs')).toBe('HTTP/1.1 400 Bad Request');
    expect(await upgrade('/ws/v1/nowhere')).toBe('HTTP/1.1 404 Not Found');
  });

  it('answers INVALID_MESSAGE to frame types that are inherited object keys, and stays open', async () => {
    const socket = await openSocket(`ws://127.0.0.1:${service.port}/ws/v1/sessions/${sessionId}`, { headers: auth() });
    await socket.nextOfType('agent_state');
    for (const type of ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf']) {
      socket.send({ type, payload: {} });
      const error = await socket.next((frame) => frame.type === 'error' && frame.payload.message.includes(`"${type}"`));
      expect(error.payload.code).toBe('INVALID_MESSAGE');
    }
    socket.send({ type: 'user_message', payload: { text: 'a\u0000b' } });
    const refused = await socket.next((frame) => frame.type === 'error' && frame.payload.code === 'VALIDATION_ERROR');
    expect(refused.payload.message).toMatch(/NUL/);
    socket.send({ type: 'ping' });
    await socket.nextOfType('pong');
    socket.close();
    expect((await socket.closed).code).not.toBe(1011);
  });
});

describe('the log', () => {
  it('holds no 500 and no error line from any of the above (run last)', () => {
    expectNoServerErrors();
  });
});
