import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { GENEROUS_RATE_LIMITS } from '../helpers/auth-service';
import { testEnv } from '../helpers/env';
import { jsonBody, request } from '../helpers/http';
import { createTestPostgresDatabase, type TestPostgresDatabase } from '../helpers/postgres';
import { readyUrl, spawnService, type ServiceProcess } from '../helpers/process';
import { TEST_REDIS_URL, deleteKeys, uniquePrefix } from '../helpers/redis';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir';
import { registerUser } from '../helpers/users';
import { openSocket } from '../helpers/ws-client';

/**
 * Scale-out for real: separate OS processes (`node dist/src/main.js`, `node dist/src/worker-main.js`)
 * sharing PostgreSQL and Redis. A socket on one API process sees a turn posted to another and run
 * by a third; a worker killed with SIGKILL mid-turn loses nothing.
 */
const CONFIG = [
  'llm:',
  '  builtin_token_delay_ms: 40', // slow enough to kill the worker mid-turn
  'worker:',
  '  turn_lock_s: 2', // a dead worker's turn is taken over after ~2 s
  '  stalled_check_s: 1',
  '',
].join('\n');

let pg: TestPostgresDatabase;
let prefix: string;
let cwd: string;
const processes: ServiceProcess[] = [];

function env(extra: Record<string, string> = {}): Record<string, string> {
  return {
    ...testEnv(path.join(cwd, 'data'), GENEROUS_RATE_LIMITS),
    SERVICE_DATABASE_URL: pg.url,
    SERVICE_REDIS_URL: TEST_REDIS_URL,
    SERVICE_REDIS_PREFIX: prefix,
    ...extra,
  };
}

function start(kind: 'api' | 'worker'): ServiceProcess {
  const child = spawnService(kind === 'api' ? env({ SERVICE_EMBEDDED_WORKER: 'false' }) : env(), {
    cwd,
    entry: kind === 'api' ? 'dist/src/main.js' : 'dist/src/worker-main.js',
  });
  processes.push(child);
  return child;
}

function workerReady(worker: ServiceProcess) {
  return worker.waitForLog((entry) => entry.msg === 'Switchboard worker is ready');
}

beforeAll(async () => {
  pg = await createTestPostgresDatabase();
  prefix = uniquePrefix('multi');
  cwd = makeTempDir();
  writeFileSync(path.join(cwd, 'config.yaml'), CONFIG);
});

afterAll(async () => {
  for (const child of processes) if (child.child.exitCode === null) child.child.kill('SIGKILL');
  await Promise.all(processes.map((child) => child.exited));
  await pg.drop();
  await deleteKeys(prefix);
  removeTempDirs();
});

describe('two API processes and a separate worker on Redis', () => {
  let a: string;
  let b: string;
  let worker: ServiceProcess;
  let token: string;

  beforeAll(async () => {
    const first = start('api');
    a = await readyUrl(first); // migrates the database before the others start
    const second = start('api');
    worker = start('worker');
    [b] = await Promise.all([readyUrl(second), workerReady(worker)]);
    token = (await registerUser(`${a}/api/v1`, 'root')).token;
  }, 60_000);

  const auth = () => ({ authorization: `Bearer ${token}` });

  it('streams a turn to a socket on A that was posted to B and run by the worker', async () => {
    const created = await request(`${a}/api/v1/sessions`, jsonBody({}, auth()));
    const sessionId = created.body.data.id;
    const socket = await openSocket(`${a.replace('http', 'ws')}/ws/v1/sessions/${sessionId}`, { headers: auth() });
    await socket.nextOfType('agent_state');
    const posted = await request(`${b}/api/v1/sessions/${sessionId}/messages`, jsonBody({ text: 'Where is the deploy runbook?' }, auth()));
    expect(posted.status).toBe(202);
    const done = await socket.nextOfType('done', -Infinity, 30_000);
    expect(done.payload.text).toContain('You asked (5 words): "Where is the deploy runbook?"');
    const seqs = socket.frames.map((frame) => frame.seq);
    expect(seqs).toEqual(seqs.map((_, index) => seqs[0] + index));
    socket.close();
  });

  it('a socket on B replaces one on A (1001), across processes', async () => {
    const sessionId = (await request(`${a}/api/v1/sessions`, jsonBody({}, auth()))).body.data.id;
    const onA = await openSocket(`${a.replace('http', 'ws')}/ws/v1/sessions/${sessionId}`, { headers: auth() });
    await onA.nextOfType('agent_state');
    const onB = await openSocket(`${b.replace('http', 'ws')}/ws/v1/sessions/${sessionId}`, { headers: auth() });
    expect((await onA.closed).code).toBe(1001);
    onB.close();
  });

  it('cancels from B a turn the worker runs, in order', async () => {
    const sessionId = (await request(`${a}/api/v1/sessions`, jsonBody({}, auth()))).body.data.id;
    const socket = await openSocket(`${a.replace('http', 'ws')}/ws/v1/sessions/${sessionId}`, { headers: auth() });
    await socket.nextOfType('agent_state');
    socket.send({ type: 'user_message', payload: { text: 'tell me a long story', mode: 'normal' } });
    await socket.nextOfType('token', -Infinity, 30_000);
    expect((await request(`${b}/api/v1/sessions/${sessionId}/cancel`, { method: 'POST', headers: auth() })).status).toBe(202);
    const cancelled = await socket.next((frame) => frame.type === 'error' && frame.payload.code === 'CANCELLED', 30_000);
    expect(socket.frames.find((frame) => frame.seq === cancelled.seq - 1)).toMatchObject({ type: 'agent_state', payload: { state: 'idle' } });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(socket.frames.filter((frame) => frame.seq > cancelled.seq)).toEqual([]);
    socket.close();
  });

  it('a worker killed with SIGKILL mid-turn: another worker finishes the turn, one reply stored; logs of every process reach the admin stream', async () => {
    const sessionId = (await request(`${a}/api/v1/sessions`, jsonBody({}, auth()))).body.data.id;
    const logs = await openSocket(`${b.replace('http', 'ws')}/ws/v1/logs?token=${token}&level=INFO`);
    const socket = await openSocket(`${a.replace('http', 'ws')}/ws/v1/sessions/${sessionId}`, { headers: auth() });
    await socket.nextOfType('agent_state');
    socket.send({ type: 'user_message', payload: { text: 'survive a crash please', mode: 'normal' } });
    await socket.nextOfType('token', -Infinity, 30_000);
    worker.child.kill('SIGKILL');
    expect(await worker.exited).toBe('SIGKILL');
    worker = start('worker');
    await workerReady(worker);
    const done = await socket.nextOfType('done', -Infinity, 30_000);
    expect(done.payload.text).toContain('"survive a crash please"');
    const history = await request(`${b}/api/v1/sessions/${sessionId}/messages`, { headers: auth() });
    expect(history.body.data.items.map((message: any) => message.role)).toEqual(['user', 'assistant']);
    expect(history.body.data.items[1].id).toBe(done.payload.message_id);
    // The new worker's lines reach the log socket on B.
    await logs.next((line) => typeof line.logger === 'string' && line.logger.startsWith('worker:'), 15_000);
    socket.close();
    logs.close();
  }, 60_000);
});
