import { startService, type RunningService } from '../../src/main';
import { ScriptedProvider } from '../fakes/scripted-provider';
import { GENEROUS_RATE_LIMITS } from '../helpers/auth-service';
import { testEnv } from '../helpers/env';
import { jsonBody, request } from '../helpers/http';
import { LogCapture } from '../helpers/log-capture';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir';
import { registerUser } from '../helpers/users';

/** What an operator reads: one line per request and one per turn, each JSON line with one `name`. */
let service: RunningService;
const logs = new LogCapture();

beforeAll(async () => {
  service = await startService({
    env: testEnv(makeTempDir(), GENEROUS_RATE_LIMITS),
    cwd: makeTempDir(),
    logDestination: logs,
    provider: new ScriptedProvider(),
  });
});

afterAll(async () => {
  await service.stop();
  removeTempDirs();
});

it('every JSON line has exactly one "name" key (the process), migrations included', () => {
  expect(logs.lines.length).toBeGreaterThan(5);
  for (const line of logs.lines) expect(line.match(/"name":/g) ?? []).toHaveLength(1);
  expect(logs.entries().some((entry) => entry.msg === 'migration' && typeof entry.migration === 'string')).toBe(true);
});

it('a request line carries method, path template and status; a turn logs one info line with its facts', async () => {
  const api = `http://127.0.0.1:${service.port}/api/v1`;
  const { token } = await registerUser(api, 'logs_reader');
  const session = (await request(`${api}/sessions`, jsonBody({}, { authorization: `Bearer ${token}` }))).body.data.id;
  const done = await request(`${api}/sessions/${session}/messages?sync=true`, jsonBody({ text: 'hello' }, { authorization: `Bearer ${token}` }));
  expect(done.status).toBe(200);

  const requestLine = logs.entries().find((entry) => entry.route === '/api/v1/sessions/{id}/messages');
  expect(requestLine).toMatchObject({ level: 'info', req: { method: 'POST' }, res: { status: 200 } });
  expect(requestLine!.msg).toMatch(/^POST \/api\/v1\/sessions\/\{id\}\/messages 200 \d+ ms$/);

  const turns = logs.entries().filter((entry) => entry.msg === 'turn ended' && entry.session_id === session);
  expect(turns).toHaveLength(1);
  expect(turns[0]).toMatchObject({
    level: 'info',
    turn_id: done.body.data.turn_id,
    workflow: null,
    routing_reason: 'default',
    input_tokens: expect.any(Number),
    output_tokens: 4,
    duration_ms: expect.any(Number),
    outcome: 'done',
  });
  // The web channel says it started, with its mode.
  expect(logs.entries().some((entry) => entry.msg === 'web channel started (mode=rest+websocket)')).toBe(true);
});
