import { randomUUID } from 'node:crypto';
import type { SessionFrame } from '../../src/core/events';
import { openDatabase, type Database } from '../../src/db/database';
import { migrateToLatest } from '../../src/db/migrator';
import { initModels, type Models } from '../../src/db/models';
import { InProcessControlBus } from '../../src/events/in-process-control-bus';
import { InProcessEventLog } from '../../src/events/in-process-event-log';
import { createLogger } from '../../src/logs/logger';
import { InProcessTurnQueue } from '../../src/queue/in-process-turn-queue';
import { TurnService } from '../../src/sessions/turn-service';
import { TurnWorker } from '../../src/worker/turn-worker';
import { ScriptedProvider } from '../fakes/scripted-provider';
import { TestTools } from '../fakes/test-tools';
import { loadConfig } from '../../src/config';
import { SessionTools } from '../../src/sessions/session-tools';
import { TEST_JWT_SECRET } from '../helpers/env';
import { LogCapture } from '../helpers/log-capture';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir';

const logger = createLogger({ level: 'warn', format: 'json', name: 'test', destination: new LogCapture() });
let database: Database;
let models: Models;
const events = new InProcessEventLog();
const control = new InProcessControlBus();
const queue = new InProcessTurnQueue(logger);
const provider = new ScriptedProvider();
const tools = new TestTools();
let worker: TurnWorker;
let turns: TurnService;
const signal = new AbortController().signal;

beforeAll(async () => {
  database = await openDatabase({ data_dir: makeTempDir(), database: { url: null, pool_max: 1 } }, logger);
  await migrateToLatest(database);
  models = initModels(database.sequelize);
  // The worker is driven by hand here (handle), so redelivery can be staged exactly.
  const { config } = loadConfig({ env: { SERVICE_JWT_SECRET: TEST_JWT_SECRET }, cwd: makeTempDir() });
  worker = new TurnWorker({
    models,
    queue,
    events,
    control,
    provider,
    logger,
    concurrency: 1,
    sessionTools: new SessionTools(tools),
    agent: config.agent,
    contextWindow: config.llm.context_window,
  });
  turns = new TurnService({ models, queue: { ...queue, name: 'in-process', enqueue: async () => undefined } as never, events, control, logger });
});

afterAll(async () => {
  await database.close();
  await events.close();
  removeTempDirs();
});

async function newSession() {
  return models.Session.create({
    id: randomUUID(),
    name: 'worker test',
    owner_id: 'u1',
    channel: 'web',
    session_key: null,
    active_workflow_id: null,
    config: {},
    active_tools: [],
    current_turn_id: null,
    turn_phase: null,
    archived_at: null,
  });
}

function framesOf(sessionId: string): Promise<SessionFrame[]> {
  return events.replay(sessionId, -1).then((replay) => replay.frames);
}

it('a redelivered job whose reply is stored does not run the model again, and repeats the same done', async () => {
  const session = await newSession();
  const message = await turns.accept({ session, text: 'once only', mode: 'normal', metadata: {} });
  const job = { sessionId: session.id, userMessageId: message.id };
  await worker.handle(job, { signal });
  const calls = provider.requests.length;
  const firstDone = (await framesOf(session.id)).find((frame) => frame.type === 'done')!;

  // The at-least-once queue delivers the same job again, as if the first worker died before acking.
  await models.Session.update({ current_turn_id: message.id, turn_phase: 'running' }, { where: { id: session.id } });
  await worker.handle(job, { signal });

  expect(provider.requests.length).toBe(calls);
  const replies = await models.Message.findAll({ where: { session_id: session.id, role: 'assistant' } });
  expect(replies).toHaveLength(1);
  const dones = (await framesOf(session.id)).filter((frame) => frame.type === 'done');
  expect(dones.map((frame) => frame.payload)).toEqual([
    firstDone.payload,
    { ...firstDone.payload, duration_ms: expect.any(Number) },
  ]);
  const after = await models.Session.findOne({ where: { id: session.id } });
  expect(after).toMatchObject({ current_turn_id: null, turn_phase: null, state: 'idle' });
});

it('skips a job that is no longer the session turn (finished or cancelled meanwhile)', async () => {
  const session = await newSession();
  const calls = provider.requests.length;
  await worker.handle({ sessionId: session.id, userMessageId: randomUUID() }, { signal });
  expect(provider.requests.length).toBe(calls);
  expect(await framesOf(session.id)).toEqual([]);
});

it('the database refuses a second reply to one user message', async () => {
  const session = await newSession();
  const message = await turns.accept({ session, text: 'unique', mode: 'normal', metadata: {} });
  await worker.handle({ sessionId: session.id, userMessageId: message.id }, { signal });
  await expect(
    models.Message.create({
      id: randomUUID(),
      session_id: session.id,
      role: 'assistant',
      content: 'a second answer',
      tool_calls: [],
      workflow_id: null,
      mode: 'normal',
      metadata: {},
      reply_to: message.id,
    }),
  ).rejects.toMatchObject({ name: 'SequelizeUniqueConstraintError' });
});
