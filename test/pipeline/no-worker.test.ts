import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { startService, startWorkerProcess, type RunningService } from '../../src/main';
import { ScriptedProvider } from '../fakes/scripted-provider';
import { GENEROUS_RATE_LIMITS } from '../helpers/auth-service';
import { testEnv } from '../helpers/env';
import { jsonBody, request } from '../helpers/http';
import { LogCapture } from '../helpers/log-capture';
import { createTestPostgresDatabase, type TestPostgresDatabase } from '../helpers/postgres';
import { deleteKeys, TEST_REDIS_URL, uniquePrefix } from '../helpers/redis';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir';
import { registerUser } from '../helpers/users';
import { openSocket } from '../helpers/ws-client';

/**
 * `SERVICE_EMBEDDED_WORKER=false` with no worker running: readiness says so, a turn nobody takes
 * tells its client (and the log) instead of "thinking" forever, and runs once a worker starts.
 */
let database: TestPostgresDatabase;
const prefix = uniquePrefix('no-worker');
let api: RunningService;
let worker: RunningService | null = null;
const logs = new LogCapture();

function env(): Record<string, string> {
  return testEnv(makeTempDir(), {
    ...GENEROUS_RATE_LIMITS,
    SERVICE_DATABASE_URL: database.url,
    SERVICE_REDIS_URL: TEST_REDIS_URL,
    SERVICE_REDIS_PREFIX: prefix,
    SERVICE_EMBEDDED_WORKER: 'false',
  });
}

beforeAll(async () => {
  database = await createTestPostgresDatabase();
  const cwd = makeTempDir();
  writeFileSync(path.join(cwd, 'config.yaml'), 'worker:\n  pickup_warning_s: 1\n');
  api = await startService({ env: env(), cwd, logDestination: logs, provider: new ScriptedProvider() });
});

afterAll(async () => {
  await worker?.stop();
  await api.stop();
  await database.drop();
  await deleteKeys(prefix);
  removeTempDirs();
});

it('is not ready without a worker, tells the client its turn waits, and runs it when a worker starts', async () => {
  const base = `http://127.0.0.1:${api.port}/api/v1`;
  const ready = await request(`${base}/health/ready`);
  expect(ready.status).toBe(503);
  expect(ready.body.error.details.checks.workers).toMatchObject({ status: 'failed', error: expect.stringContaining('npm run worker') });

  const { token } = await registerUser(base, 'waiting');
  const headers = { authorization: `Bearer ${token}` };
  const session = (await request(`${base}/sessions`, jsonBody({}, headers))).body.data.id;
  const socket = await openSocket(`ws://127.0.0.1:${api.port}/ws/v1/sessions/${session}`, { headers });
  await socket.nextOfType('agent_state');
  const accepted = await request(`${base}/sessions/${session}/messages`, jsonBody({ text: 'anyone there?' }, headers));
  expect(accepted.status).toBe(202);

  const note = await socket.nextOfType('error', -Infinity, 10_000);
  expect(note.payload).toMatchObject({ code: 'WORKER_UNAVAILABLE', turn_id: accepted.body.data.id, message: expect.stringContaining('no worker is running') });
  expect(logs.entries().some((entry) => entry.level === 'warn' && String(entry.msg).includes('waited 1 s for a worker'))).toBe(true);

  worker = await startWorkerProcess({ env: env(), cwd: makeTempDir(), logDestination: new LogCapture(), provider: new ScriptedProvider() });
  const done = await socket.nextOfType('done', note.seq, 20_000);
  expect(done.payload.turn_id).toBe(accepted.body.data.id);
  expect((await request(`${base}/health/ready`)).status).toBe(200);
  socket.close();
});
