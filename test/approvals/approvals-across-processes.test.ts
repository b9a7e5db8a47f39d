import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { startService, type RunningService } from '../../src/main';
import { ScriptedProvider } from '../fakes/scripted-provider';
import { TestTools } from '../fakes/test-tools';
import { GENEROUS_RATE_LIMITS } from '../helpers/auth-service';
import { testEnv } from '../helpers/env';
import { jsonBody, request } from '../helpers/http';
import { LogCapture } from '../helpers/log-capture';
import { createTestPostgresDatabase, type TestPostgresDatabase } from '../helpers/postgres';
import { deleteKeys, TEST_REDIS_URL, uniquePrefix } from '../helpers/redis';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir';
import { registerUser, type TestUser } from '../helpers/users';

/**
 * Approvals across processes (issue 30), on PostgreSQL and Redis: clicks arrive on an API process
 * that runs no turns, the turn waits on a worker hub; the worker stops mid-wait and another takes
 * the turn over: it asks the same approval again and the click counted before stays counted.
 */
let database: TestPostgresDatabase;
const prefix = uniquePrefix('approvals');
const provider = new ScriptedProvider();
const tools = new TestTools();
const hubs: RunningService[] = [];
let front: RunningService;
let admin: TestUser;
let ann: TestUser;
let bob: TestUser;
let carol: TestUser;
const cwd = makeTempDir();

async function startHub(embeddedWorker: boolean): Promise<RunningService> {
  const hub = await startService({
    env: testEnv(makeTempDir(), {
      ...GENEROUS_RATE_LIMITS,
      SERVICE_DATABASE_URL: database.url,
      SERVICE_REDIS_URL: TEST_REDIS_URL,
      SERVICE_REDIS_PREFIX: prefix,
      SERVICE_EMBEDDED_WORKER: String(embeddedWorker),
    }),
    cwd,
    logDestination: new LogCapture(),
    provider,
    tools,
  });
  hubs.push(hub);
  return hub;
}

const api = (hub: RunningService) => `http://127.0.0.1:${hub.port}/api/v1`;
const as = (user: TestUser) => ({ authorization: `Bearer ${user.token}` });

beforeAll(async () => {
  writeFileSync(path.join(cwd, 'config.yaml'), 'worker:\n  turn_lock_s: 2\n  stalled_check_s: 1\n');
  database = await createTestPostgresDatabase();
  front = await startHub(false);
  admin = await registerUser(api(front), 'root');
  [ann, bob, carol] = [await registerUser(api(front), 'ann'), await registerUser(api(front), 'bob'), await registerUser(api(front), 'carol')];
  const workflow = {
    name: 'ops',
    tool_list: 'save_note',
    approvals: [{ tools: ['save_note'], approvers: { users: ['bob', 'carol'] }, quorum: 2 }],
  };
  expect((await request(`${api(front)}/assistant/workflows`, jsonBody(workflow, as(admin)))).status).toBe(201);
}, 60_000);

afterAll(async () => {
  for (const hub of hubs.reverse()) await hub.stop().catch(() => undefined);
  await database.drop();
  await deleteKeys(prefix);
  removeTempDirs();
});

async function pendingApproval(sessionId: string, approvals: number): Promise<any> {
  for (let attempt = 0; attempt < 800; attempt += 1) {
    const pending = (await request(`${api(front)}/sessions/${sessionId}`, { headers: as(ann) })).body.data.pending_confirmation;
    if (pending?.approval?.approvals === approvals) return pending;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`no approval with ${approvals} counted`);
}

it('counts clicks on an API process for a turn on a worker, and keeps them across a worker restart', async () => {
  const firstWorker = await startHub(true);
  const id = (await request(`${api(front)}/sessions`, jsonBody({}, as(ann)))).body.data.id;
  provider.rounds = [{ calls: [{ id: 'call-restart', name: 'save_note', arguments: JSON.stringify({ text: 'across' }) }] }, { text: ['Stored across.'] }];
  const sent = await request(`${api(front)}/sessions/${id}/messages`, jsonBody({ text: 'save it', metadata: { workflow: 'ops' } }, as(ann)));
  expect(sent.status).toBe(202);
  const asked = await pendingApproval(id, 0);
  const counted = await request(`${api(front)}/approvals/${asked.confirmation_id}`, jsonBody({ action: 'allow' }, as(bob)));
  expect(counted.body.data).toMatchObject({ counted: true, decided: null, progress: { approvals: 1 } });
  await pendingApproval(id, 1);

  // The worker goes away while the turn waits; another takes the turn over and asks the same approval again.
  await firstWorker.stop();
  await startHub(true);
  const again = await pendingApproval(id, 1);
  expect(again.confirmation_id).toBe(asked.confirmation_id);
  expect(again.approval.approved_by).toEqual(['bob']);
  expect(tools.runs).toHaveLength(0);

  const decided = await request(`${api(front)}/approvals/${asked.confirmation_id}`, jsonBody({ action: 'allow' }, as(carol)));
  expect(decided.body.data).toMatchObject({ decided: 'allow', progress: { approvals: 2 } });
  for (let attempt = 0; attempt < 400; attempt += 1) {
    const session = (await request(`${api(front)}/sessions/${id}`, { headers: as(ann) })).body.data;
    if (session.state === 'idle' && session.pending_confirmation === null) break;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  const history = (await request(`${api(front)}/sessions/${id}/messages`, { headers: as(ann) })).body.data.items;
  expect(history.at(-1)).toMatchObject({ role: 'assistant', content: 'Stored across.' });
  expect(tools.runs).toEqual([{ tool: 'save_note', input: { text: 'across' } }]);
}, 60_000);
