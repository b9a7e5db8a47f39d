import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { startService, type RunningService } from '../../../src/main';
import { ScriptedProvider } from '../../fakes/scripted-provider';
import { testEnv } from '../../helpers/env';
import { jsonBody, request } from '../../helpers/http';
import { LogCapture } from '../../helpers/log-capture';
import { TEST_REDIS_URL, deleteKeys, uniquePrefix } from '../../helpers/redis';
import { makeTempDir, removeTempDirs } from '../../helpers/temp-dir';
import { GENEROUS_RATE_LIMITS } from '../../helpers/auth-service';
import { registerUser, type TestUser } from '../../helpers/users';
import { openSocket, type TestSocket } from '../../helpers/ws-client';

type Driver = 'in-process' | 'redis';

interface Hub {
  service: RunningService;
  /** Registered first: the admin. */
  root: TestUser;
  provider: ScriptedProvider;
  http: string;
  ws: string;
  close(): Promise<void>;
}

async function startHub(driver: Driver, yamlText = ''): Promise<Hub> {
  const cwd = makeTempDir();
  writeFileSync(path.join(cwd, 'config.yaml'), yamlText);
  const prefix = uniquePrefix('ws');
  const redis: Record<string, string> = driver === 'redis' ? { SERVICE_REDIS_URL: TEST_REDIS_URL, SERVICE_REDIS_PREFIX: prefix } : {};
  const env = testEnv(path.join(cwd, 'data'), { ...GENEROUS_RATE_LIMITS, ...redis });
  const provider = new ScriptedProvider();
  const service = await startService({ env, cwd, logDestination: new LogCapture(), provider });
  const root = await registerUser(`http://127.0.0.1:${service.port}/api/v1`, 'root');
  return {
    service,
    root,
    provider,
    http: `http://127.0.0.1:${service.port}/api/v1`,
    ws: `ws://127.0.0.1:${service.port}/ws/v1`,
    close: async () => {
      await service.stop();
      if (driver === 'redis') await deleteKeys(prefix);
    },
  };
}

const auth = (token: string) => ({ authorization: `Bearer ${token}` });

async function createSession(hub: Hub, token: string): Promise<string> {
  const response = await request(`${hub.http}/sessions`, jsonBody({ name: 'test' }, auth(token)));
  expect(response.status).toBe(201);
  return response.body.data.id;
}

function connect(hub: Hub, sessionId: string, token: string, query = ''): Promise<TestSocket> {
  return openSocket(`${hub.ws}/sessions/${sessionId}${query}`, { headers: auth(token) });
}

/** The seqs of frames must be consecutive: gapless and without duplicates. */
function expectGapless(frames: any[]): void {
  const seqs = frames.map((frame) => frame.seq);
  expect(seqs).toEqual(seqs.map((_, index) => seqs[0] + index));
}

afterAll(removeTempDirs);

describe.each<Driver>(['in-process', 'redis'])('session WebSocket (%s driver)', (driver) => {
  let hub: Hub;
  let alice: string;
  let mallory: string;

  beforeAll(async () => {
    hub = await startHub(driver);
    alice = (await registerUser(hub.http, 'alice')).token;
    mallory = (await registerUser(hub.http, 'mallory')).token;
  });

  afterAll(async () => {
    await hub.close();
  });

  beforeEach(() => {
    hub.provider.pieces = ['Hello', ' there', ', friend', '.'];
    hub.provider.pauseBefore = null;
    hub.provider.failAt = null;
  });

  it('greets with the current state, then streams a whole turn in the spec order', async () => {
    const sessionId = await createSession(hub, alice);
    const socket = await connect(hub, sessionId, alice);
    const first = await socket.next(() => true);
    expect(first).toMatchObject({ type: 'agent_state', session_id: sessionId, payload: { state: 'idle' } });
    expect(Object.keys(first)).toEqual(['type', 'session_id', 'payload', 'seq', 'ts']);

    socket.send({ type: 'user_message', payload: { text: 'hi there', mode: 'normal' } });
    const done = await socket.nextOfType('done');
    const turn = socket.frames.slice(1);
    expect(turn.map((frame) => (frame.type === 'agent_state' ? `state:${frame.payload.state}` : frame.type))).toEqual([
      'state:thinking',
      'state:writing',
      'token',
      'token',
      'token',
      'token',
      'state:done',
      'done',
    ]);
    expectGapless(socket.frames);
    const history = await request(`${hub.http}/sessions/${sessionId}/messages`, { headers: auth(alice) });
    expect(history.body.data.items.map((m: any) => [m.role, m.content])).toEqual([
      ['user', 'hi there'],
      ['assistant', 'Hello there, friend.'],
    ]);
    // Every event of the turn names it: its user message's id (decisions.md §3).
    const turnId = history.body.data.items[0].id;
    expect(turn.every((frame) => frame.payload.turn_id === turnId)).toBe(true);
    expect(turn.filter((f) => f.type === 'token').map((f) => f.payload)).toEqual(
      ['Hello', ' there', ', friend', '.'].map((text) => ({ text, final: false, turn_id: turnId })),
    );
    expect(done.payload).toEqual({
      message_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      total_tokens: 15,
      input_tokens: 11,
      output_tokens: 4,
      duration_ms: expect.any(Number),
      tool_calls: 0,
      text: 'Hello there, friend.',
      turn_id: turnId,
      workflow: null,
      routing_reason: 'default',
    });
    expect(history.body.data.items[1].id).toBe(done.payload.message_id);
    socket.close();
  });

  it('streams a turn sent over REST to the socket, and ?sync=true returns the done payload', async () => {
    const sessionId = await createSession(hub, alice);
    const socket = await connect(hub, sessionId, alice);
    await socket.nextOfType('agent_state');
    const accepted = await request(`${hub.http}/sessions/${sessionId}/messages`, jsonBody({ text: 'over REST' }, auth(alice)));
    expect(accepted.status).toBe(202);
    expect(accepted.body.data).toMatchObject({ role: 'user', content: 'over REST', session_id: sessionId });
    const done = await socket.nextOfType('done');
    expect(done.payload.text).toBe('Hello there, friend.');

    const synced = await request(`${hub.http}/sessions/${sessionId}/messages?sync=true`, jsonBody({ content: 'and wait' }, auth(alice)));
    expect(synced.status).toBe(200);
    expect(synced.body.data).toMatchObject({ text: 'Hello there, friend.', tool_calls: 0 });
    socket.close();
  });

  it('refuses a second message while a turn runs (TURN_IN_PROGRESS), without disturbing the turn', async () => {
    const sessionId = await createSession(hub, alice);
    const socket = await connect(hub, sessionId, alice);
    hub.provider.pauseBefore = 2;
    socket.send({ type: 'user_message', payload: { text: 'first', mode: 'normal' } });
    await hub.provider.paused();
    socket.send({ type: 'user_message', payload: { text: 'second', mode: 'normal' } });
    const refused = await socket.nextOfType('error');
    expect(refused.payload.code).toBe('TURN_IN_PROGRESS');
    const rest = await request(`${hub.http}/sessions/${sessionId}/messages`, jsonBody({ text: 'third' }, auth(alice)));
    expect(rest.status).toBe(409);
    expect(rest.body.error.code).toBe('TURN_IN_PROGRESS');
    hub.provider.release();
    const done = await socket.nextOfType('done');
    expect(done.payload.text).toBe('Hello there, friend.');
    expectGapless(socket.frames);
    socket.close();
  });

  it('cancel: agent_state idle, then error CANCELLED, no done; the socket stays usable', async () => {
    const sessionId = await createSession(hub, alice);
    const socket = await connect(hub, sessionId, alice);
    hub.provider.pauseBefore = 2;
    socket.send({ type: 'user_message', payload: { text: 'long job', mode: 'normal' } });
    await hub.provider.paused();
    socket.send({ type: 'cancel', payload: {} });
    const cancelled = await socket.next((frame) => frame.type === 'error' && frame.payload.code === 'CANCELLED');
    const idle = socket.frames.filter((frame) => frame.type === 'agent_state' && frame.payload.state === 'idle').at(-1);
    expect(idle.seq).toBe(cancelled.seq - 1);
    hub.provider.release();
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(socket.frames.filter((frame) => frame.type === 'done')).toEqual([]);
    expect(socket.frames.filter((frame) => frame.seq > cancelled.seq)).toEqual([]);

    hub.provider.pauseBefore = null;
    socket.send({ type: 'user_message', payload: { text: 'again', mode: 'normal' } });
    const done = await socket.nextOfType('done', cancelled.seq);
    expect(done.payload.text).toBe('Hello there, friend.');
    const history = await request(`${hub.http}/sessions/${sessionId}/messages`, { headers: auth(alice) });
    expect(history.body.data.items.map((m: any) => m.role)).toEqual(['user', 'user', 'assistant']);
    socket.close();
  });

  it('an exception mid-stream: error, agent_state error, agent_state idle; the connection stays open', async () => {
    const sessionId = await createSession(hub, alice);
    const socket = await connect(hub, sessionId, alice);
    hub.provider.failAt = 1;
    socket.send({ type: 'user_message', payload: { text: 'break', mode: 'normal' } });
    const error = await socket.nextOfType('error');
    expect(error.payload).toEqual({
      code: 'INTERNAL_ERROR',
      message: 'The agent failed: an internal error occurred.',
      turn_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
    });
    const after = await socket.next((frame) => frame.type === 'agent_state' && frame.payload.state === 'idle' && frame.seq > error.seq);
    expect(socket.frames.filter((f) => f.seq > error.seq && f.seq <= after.seq).map((f) => f.payload.state)).toEqual(['error', 'idle']);
    hub.provider.failAt = null;
    socket.send({ type: 'ping', payload: {} });
    expect((await socket.nextOfType('pong', after.seq)).payload).toEqual({});
    socket.close();
  });

  it('replays after a drop mid-turn with no gaps and no duplicates', async () => {
    const sessionId = await createSession(hub, alice);
    const first = await connect(hub, sessionId, alice);
    hub.provider.pauseBefore = 2;
    first.send({ type: 'user_message', payload: { text: 'drop me', mode: 'normal' } });
    await first.next((frame) => frame.type === 'token' && frame.payload.text === ' there');
    await hub.provider.paused();
    const lastSeen = first.frames.at(-1).seq;
    first.close();
    await first.closed;
    hub.provider.release(); // the rest of the turn happens while nobody is connected
    await new Promise((resolve) => setTimeout(resolve, 150));
    const second = await connect(hub, sessionId, alice, `?last_seq=${lastSeen}`);
    await second.next((frame) => frame.type === 'agent_state' && frame.payload.state === 'idle');
    const all = [...first.frames, ...second.frames];
    expectGapless(all);
    expect(
      all
        .filter((f) => f.type === 'token')
        .map((f) => f.payload.text)
        .join(''),
    ).toBe('Hello there, friend.');
    expect(second.frames.filter((f) => f.type === 'done')).toHaveLength(1);
    expect(second.frames.at(-1)).toMatchObject({ type: 'agent_state', payload: { state: 'idle' } });
    second.close();
  });

  it('sends only the current state when last_seq is older than the buffer', async () => {
    const sessionId = await createSession(hub, alice);
    const socket = await connect(hub, sessionId, alice, '?last_seq=100000');
    const first = await socket.next(() => true);
    expect(first).toMatchObject({ type: 'agent_state', payload: { state: 'idle' }, seq: 100001 });
    socket.close();
  });

  it('a second connection takes over the first: a session_taken_over notice (no seq), then 1001 with its own reason', async () => {
    const sessionId = await createSession(hub, alice);
    const first = await connect(hub, sessionId, alice);
    await first.nextOfType('agent_state');
    const second = await connect(hub, sessionId, alice);
    expect(await first.closed).toEqual({ code: 1001, reason: 'taken over by another connection' });
    expect(first.frames.at(-1)).toEqual({ type: 'session_taken_over', session_id: sessionId, payload: {}, ts: expect.any(String) });
    second.send({ type: 'ping', payload: {} });
    await second.nextOfType('pong');
    // The notice is outside the numbered log: the new socket's frames stay gapless and never replay it.
    expectGapless(second.frames);
    expect(second.frames.some((frame) => frame.type === 'session_taken_over')).toBe(false);
    second.close();
  });

  it('answers invalid frames with an error frame and keeps the connection; pong is numbered too', async () => {
    const sessionId = await createSession(hub, alice);
    const socket = await connect(hub, sessionId, alice);
    await socket.nextOfType('agent_state');
    const cases: [unknown, string][] = [
      ['not json', 'INVALID_MESSAGE'],
      [{ type: 'dance', payload: {} }, 'INVALID_MESSAGE'],
      [{ type: 'user_message', payload: { text: '' } }, 'VALIDATION_ERROR'],
      [{ type: 'user_message', payload: { text: 'x'.repeat(65_537) } }, 'VALIDATION_ERROR'],
      [{ type: 'user_message', payload: { text: 'ok', mode: 'turbo' } }, 'VALIDATION_ERROR'],
      [{ type: 'cancel', payload: {} }, 'CONFLICT'],
      [{ type: 'tool_confirm', payload: { confirmation_id: 'nope', action: 'allow' } }, 'INVALID_MESSAGE'],
    ];
    for (const [frame, code] of cases) {
      const before = socket.frames.at(-1).seq;
      socket.send(frame);
      const reply = await socket.nextOfType('error', before);
      expect({ frame, code: reply.payload.code }).toEqual({ frame, code });
    }
    socket.send({ type: 'ping', payload: {} });
    await socket.nextOfType('pong');
    expectGapless(socket.frames);
    socket.close();
  });

  it('accepts a 65,536-character message', async () => {
    const sessionId = await createSession(hub, alice);
    const socket = await connect(hub, sessionId, alice);
    socket.send({ type: 'user_message', payload: { text: 'é'.repeat(65_536), mode: 'normal' } });
    await socket.nextOfType('done');
    socket.close();
  });

  it('closes with 1009 on a frame over 1 MiB', async () => {
    const sessionId = await createSession(hub, alice);
    const socket = await connect(hub, sessionId, alice);
    await socket.nextOfType('agent_state');
    socket.send('x'.repeat(1024 * 1024 + 1));
    expect((await socket.closed).code).toBe(1009);
  });

  it('closes at connect: 4001 without or with a bad token, 4003 for a stranger, 4004 unknown or archived', async () => {
    const sessionId = await createSession(hub, alice);
    const noToken = await openSocket(`${hub.ws}/sessions/${sessionId}`);
    expect((await noToken.closed).code).toBe(4001);
    const badToken = await connect(hub, sessionId, 'garbage');
    expect((await badToken.closed).code).toBe(4001);
    const stranger = await connect(hub, sessionId, mallory);
    expect((await stranger.closed).code).toBe(4003);
    const unknown = await connect(hub, '6a0f3c1e-2b4d-4e5f-8a9b-0c1d2e3f4a5b', alice);
    expect((await unknown.closed).code).toBe(4004);
    const notUuid = await connect(hub, 'not-a-session', alice);
    expect((await notUuid.closed).code).toBe(4004);
    expect((await request(`${hub.http}/sessions/${sessionId}`, { method: 'DELETE', headers: auth(alice) })).status).toBe(200);
    const archived = await connect(hub, sessionId, alice);
    expect((await archived.closed).code).toBe(4004);
    // An admin may watch any session.
    await request(`${hub.http}/sessions/${sessionId}/restore`, { method: 'POST', headers: auth(alice) });
    const admin = await connect(hub, sessionId, hub.root.token);
    expect((await admin.nextOfType('agent_state')).payload.state).toBe('idle');
    admin.close();
  });

  it('takes the token from Sec-WebSocket-Protocol and echoes bearer', async () => {
    const sessionId = await createSession(hub, alice);
    const socket = await openSocket(`${hub.ws}/sessions/${sessionId}`, { protocols: ['bearer', alice] });
    expect(socket.protocol).toBe('bearer');
    await socket.nextOfType('agent_state');
    socket.close();
  });

  it('refuses a browser Origin that is not allowed, and allows the web UI dev server', async () => {
    const sessionId = await createSession(hub, alice);
    await expect(openSocket(`${hub.ws}/sessions/${sessionId}`, { headers: { ...auth(alice), origin: 'https://evil.example' } })).rejects.toMatchObject({
      status: 403,
    });
    const allowed = await openSocket(`${hub.ws}/sessions/${sessionId}`, { headers: { ...auth(alice), origin: 'http://localhost:5173' } });
    await allowed.nextOfType('agent_state');
    allowed.close();
  });
});

describe('idle sockets', () => {
  let hub: Hub;
  let bob: string;

  beforeAll(async () => {
    hub = await startHub('in-process', 'websocket:\n  idle_timeout_s: 1\n');
    bob = (await registerUser(hub.http, 'bob')).token;
  });

  afterAll(async () => {
    await hub.close();
  });

  it('are closed after the idle timeout without client frames, but not while a turn runs', async () => {
    const sessionId = await createSession(hub, bob);
    const quiet = await connect(hub, sessionId, bob);
    expect(await quiet.closed).toEqual({ code: 1000, reason: 'idle timeout' });

    const busy = await connect(hub, sessionId, bob);
    hub.provider.pauseBefore = 1;
    busy.send({ type: 'user_message', payload: { text: 'slow', mode: 'normal' } });
    await hub.provider.paused();
    await new Promise((resolve) => setTimeout(resolve, 1_800));
    hub.provider.release();
    await busy.nextOfType('done');
    expect(await busy.closed).toEqual({ code: 1000, reason: 'idle timeout' });
  });
});

describe('shutdown', () => {
  it('closes sockets with 1001 "server shutting down" and no takeover notice: clients reconnect after it', async () => {
    const hub = await startHub('in-process');
    const sessionId = await createSession(hub, hub.root.token);
    const socket = await connect(hub, sessionId, hub.root.token);
    await socket.nextOfType('agent_state');
    await hub.close();
    expect(await socket.closed).toEqual({ code: 1001, reason: 'server shutting down' });
    expect(socket.frames.some((frame) => frame.type === 'session_taken_over')).toBe(false);
  });
});
