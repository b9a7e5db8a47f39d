import { randomUUID } from 'node:crypto';
import type { SessionFrame } from '../../src/core/events';
import { openDatabase, type Database } from '../../src/db/database';
import { migrateToLatest } from '../../src/db/migrator';
import { initModels, type Models } from '../../src/db/models';
import { InProcessControlBus } from '../../src/events/in-process-control-bus';
import { InProcessEventLog } from '../../src/events/in-process-event-log';
import { InProcessTurnRegistry } from '../../src/events/in-process-turn-registry';
import { InProcessWorkerPresence } from '../../src/events/worker-presence';
import { SqliteTurnStore } from '../../src/db/sqlite/sqlite-turn-store';
import type { TurnStore } from '../../src/db/turn-store';
import { PickupWatch } from '../../src/turns/pickup-watch';
import { createLogger } from '../../src/logs/logger';
import { InProcessTurnQueue } from '../../src/queue/in-process-turn-queue';
import { TurnService } from '../../src/turns/turn-service';
import { TurnWorker } from '../../src/worker/turn-worker';
import { ProviderError } from '../../src/agent/provider';
import { ScriptedProvider } from '../fakes/scripted-provider';
import { TestTools } from '../fakes/test-tools';
import { loadConfig } from '../../src/config';
import { SessionTools } from '../../src/sessions/session-tools';
import { CHANNELS } from '../../adapters';
import { RoutingService } from '../../src/routing/routing-service';
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
const registry = new InProcessTurnRegistry();
let store: SqliteTurnStore;
let worker: TurnWorker;
let turns: TurnService;
const signal = new AbortController().signal;

beforeAll(async () => {
  database = await openDatabase({ data_dir: makeTempDir(), database: { url: null, pool_max: 1 } }, logger);
  await migrateToLatest(database);
  models = initModels(database.sequelize);
  store = await SqliteTurnStore.open(database.file!);
  // The worker is driven by hand here (handle), so redelivery can be staged exactly.
  const routing = new RoutingService(models, CHANNELS);
  const presence = new InProcessWorkerPresence();
  turns = new TurnService({
    store,
    registry,
    queue: { ...queue, name: 'in-process', enqueue: async () => undefined } as never,
    events,
    control,
    logger,
    hasWorkflow: (name) => routing.hasWorkflow(name),
    pickup: new PickupWatch({ registry, events, workers: presence, logger }, { warnAfterMs: 60_000, sweepMs: 60_000 }),
  });
  worker = workerFor(turns, presence);
});

/** A worker driven by hand (handle) that takes and ends the turns it is handed through `service`'s lifecycle (whose queue queues nowhere here). */
function workerFor(service: TurnService, presence = new InProcessWorkerPresence(), turnStore: TurnStore = store): TurnWorker {
  const { config } = loadConfig({ env: { SERVICE_JWT_SECRET: TEST_JWT_SECRET }, cwd: makeTempDir() });
  return new TurnWorker({
    store: turnStore,
    presence,
    heartbeatMs: 60_000,
    queue,
    control,
    provider,
    logger,
    concurrency: 1,
    sessionTools: new SessionTools(tools),
    agent: config.agent,
    contextWindow: config.llm.context_window,
    routing: new RoutingService(models, CHANNELS),
    turns: service.lifecycle,
    midTurnDefault: () => 'queue',
  });
}

afterAll(async () => {
  await store.close();
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

/** Accepts a message on the session, as the REST endpoint or the socket would. */
async function accept(sessionId: string, text: string) {
  return (await turns.accept({ sessionId, text, mode: 'normal', metadata: {} })).message;
}

function framesOf(sessionId: string): Promise<SessionFrame[]> {
  return events.replay(sessionId, -1).then((replay) => replay.frames);
}

it('a redelivered job whose reply is stored does not run the model again, and repeats the same done', async () => {
  const session = await newSession();
  const message = await accept(session.id, 'once only');
  const job = { sessionId: session.id, userMessageId: message.id };
  await worker.handle(job, { signal });
  const calls = provider.requests.length;
  const firstDone = (await framesOf(session.id)).find((frame) => frame.type === 'done')!;

  // The at-least-once queue delivers the same job again, as if the first worker died after storing
  // the reply but before it freed the session and acked.
  expect(await registry.claim(session.id, message.id)).toBe(true);
  await worker.handle(job, { signal });

  expect(provider.requests.length).toBe(calls);
  const replies = await models.Message.findAll({ where: { session_id: session.id, role: 'assistant' } });
  expect(replies).toHaveLength(1);
  const dones = (await framesOf(session.id)).filter((frame) => frame.type === 'done');
  expect(dones.map((frame) => frame.payload)).toEqual([firstDone.payload, { ...firstDone.payload, duration_ms: expect.any(Number) }]);
  expect(await registry.get(session.id)).toBeNull();
});

it('a turn whose database is out of reach is not ended: the attempt throws for the queue to try again, and the next one answers', async () => {
  const session = await newSession();
  const message = await accept(session.id, 'during an outage');
  const job = { sessionId: session.id, userMessageId: message.id };
  // The real store, but its first read meets a database that refuses connections (as PostgreSQL's does when it is down).
  let refusals = 1;
  const outage = Object.create(store) as TurnStore;
  outage.loadConversation = (...args) =>
    refusals-- > 0
      ? Promise.reject(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }))
      : store.loadConversation(...args);
  const during = workerFor(turns, new InProcessWorkerPresence(), outage);

  await expect(during.handle(job, { signal })).rejects.toThrow('ECONNREFUSED');
  expect((await framesOf(session.id)).filter((frame) => frame.type === 'error' || frame.type === 'done')).toEqual([]);
  expect((await registry.get(session.id))?.turnId).toBe(message.id);

  await during.handle(job, { signal });
  const ends = (await framesOf(session.id)).filter((frame) => frame.type === 'error' || frame.type === 'done');
  expect(ends.map((frame) => frame.type)).toEqual(['done']);
  expect(await models.Message.count({ where: { session_id: session.id, role: 'assistant' } })).toBe(1);
  expect(await registry.get(session.id)).toBeNull();
});

it('queueing unfinished turns again skips one that ended after the list was read: the session stays free, no second done', async () => {
  const session = await newSession();
  const message = await accept(session.id, 'ends meanwhile');
  await worker.handle({ sessionId: session.id, userMessageId: message.id }, { signal });
  expect(await registry.get(session.id)).toBeNull();
  // A starting worker read the unanswered turns just before this one stored its reply and freed the session.
  const stale = Object.assign(Object.create(store) as SqliteTurnStore, { unansweredTurns: async () => [{ sessionId: session.id, messageId: message.id }] });
  const queued: unknown[] = [];
  const requeuer = new TurnService({
    store: stale,
    registry,
    queue: { name: 'in-process', enqueue: async (job: unknown) => void queued.push(job) } as never,
    events,
    control,
    logger,
    hasWorkflow: async () => false,
    pickup: new PickupWatch({ registry, events, workers: new InProcessWorkerPresence(), logger }, { warnAfterMs: 60_000, sweepMs: 60_000 }),
  });
  expect(await requeuer.requeueUnfinished()).toBe(0);
  expect(queued).toEqual([]);
  expect(await registry.get(session.id)).toBeNull();
});

it('a redelivered job whose worker stored the reply and freed the session but died before done sends that done, once', async () => {
  const session = await newSession();
  const message = await accept(session.id, 'almost done');
  // The first worker stored the reply and freed the session, then died before `done` went out.
  const reply = await models.Message.create({
    id: randomUUID(),
    session_id: session.id,
    role: 'assistant',
    content: 'Stored, never announced.',
    tool_calls: [],
    workflow_id: null,
    mode: 'normal',
    metadata: { tool_calls: 0 },
    reply_to: message.id,
    turn_id: message.id,
  });
  await registry.release(session.id, message.id);
  const calls = provider.requests.length;
  await worker.handle({ sessionId: session.id, userMessageId: message.id }, { signal });
  await worker.handle({ sessionId: session.id, userMessageId: message.id }, { signal });
  expect(provider.requests.length).toBe(calls);
  const dones = (await framesOf(session.id)).filter((frame) => frame.type === 'done');
  expect(dones.map((frame) => [frame.payload.message_id, frame.payload.text, frame.payload.turn_id])).toEqual([
    [reply.id, 'Stored, never announced.', message.id],
  ]);
});

it('a retried message whose first request stored it and claimed the session but died before queueing gets its turn queued, once', async () => {
  const session = await newSession();
  const queued: { userMessageId: string }[] = [];
  const retrying = new TurnService({
    store,
    registry,
    queue: { name: 'in-process', enqueue: async (job: { userMessageId: string }) => void queued.push(job) } as never,
    events,
    control,
    logger,
    hasWorkflow: async () => false,
    pickup: new PickupWatch({ registry, events, workers: new InProcessWorkerPresence(), logger }, { warnAfterMs: 60_000, sweepMs: 60_000 }),
  });
  // Stored and claimed by the first request (`accept` here queues nowhere), which then died.
  const message = await accept(session.id, 'stranded');
  await retrying.queueIfStranded(session.id, message.id);
  expect(queued.map((job) => job.userMessageId)).toEqual([message.id]);
  // A worker has it: nothing to do.
  await registry.update(session.id, message.id, { phase: 'running' });
  await retrying.queueIfStranded(session.id, message.id);
  expect(queued).toHaveLength(1);
  // Ended: nothing to do either.
  await worker.handle({ sessionId: session.id, userMessageId: message.id }, { signal });
  await retrying.queueIfStranded(session.id, message.id);
  expect(queued).toHaveLength(1);
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
  const message = await accept(session.id, 'unique');
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

it('a side-effecting call started before a crash is never run again when the turn is redelivered', async () => {
  const session = await newSession();
  await models.Session.update({ active_tools: ['save_note'], tool_state: { approved: ['save_note'], disabled: [] } }, { where: { id: session.id } });
  const message = await accept(session.id, 'note it');
  // The first delivery got as far as starting the call (recorded), then the worker died.
  await models.ToolRun.create({
    tool_call_id: 'side-1',
    turn_id: message.id,
    session_id: session.id,
    name: 'save_note',
    status: 'running',
    created_at: new Date(),
  });
  await registry.update(session.id, message.id, { phase: 'running' });
  provider.rounds = [{ calls: [{ id: 'side-1', name: 'save_note', arguments: '{"text":"x"}' }] }, { text: ['Done.'] }];
  tools.runs.length = 0;
  await worker.handle({ sessionId: session.id, userMessageId: message.id }, { signal });
  expect(tools.runs).toEqual([]);
  const end = (await framesOf(session.id)).find((frame) => frame.type === 'tool_end');
  expect(end?.payload).toMatchObject({ tool_call_id: 'side-1', error: expect.stringMatching(/already started before an interruption; it was not run again/) });
  expect((await framesOf(session.id)).some((frame) => frame.type === 'done')).toBe(true);
});

it('a tool round stored before a crash runs its own calls when redelivered: the model is not asked again (it would name them afresh)', async () => {
  const session = await newSession();
  await models.Session.update({ active_tools: ['save_note', 'lookup'], tool_state: { approved: ['save_note'], disabled: [] } }, { where: { id: session.id } });
  const message = await accept(session.id, 'note it and look it up');
  // The first delivery stored the round as its calls started, began the side-effecting one, then died.
  const base = { session_id: session.id, workflow_id: null, mode: null, reply_to: null, turn_id: message.id };
  const round = randomUUID();
  await models.Message.create({
    ...base,
    id: round,
    role: 'assistant',
    content: 'On it. ',
    tool_calls: [
      { tool_call_id: 'first-1', tool_name: 'save_note', input: { text: 'x' }, output: null, duration_ms: null, error: null, arguments: '{"text":"x"}' },
      { tool_call_id: 'first-2', tool_name: 'lookup', input: { word: 'y' }, output: null, duration_ms: null, error: null, arguments: '{"word":"y"}' },
    ],
    metadata: {},
  });
  await models.ToolRun.create({
    tool_call_id: 'first-1',
    turn_id: message.id,
    session_id: session.id,
    name: 'save_note',
    status: 'running',
    created_at: new Date(),
  });
  await registry.update(session.id, message.id, { phase: 'running' });
  // Were the model asked for the round again, it would call save_note under a new id.
  provider.rounds = [{ text: ['Noted.'] }];
  const calls = provider.requests.length;
  tools.runs.length = 0;
  await worker.handle({ sessionId: session.id, userMessageId: message.id }, { signal });
  expect(provider.requests.length - calls).toBe(1);
  expect(tools.runs).toEqual([{ tool: 'lookup', input: { word: 'y' } }]);
  const frames = await framesOf(session.id);
  // Calls of a round run in parallel: their ends come in either order.
  const ends = frames.filter((frame) => frame.type === 'tool_end').map((frame) => [frame.payload.tool_call_id, frame.payload.error]);
  expect(ends.sort((a, b) => String(a[0]).localeCompare(String(b[0])))).toEqual([
    ['first-1', expect.stringMatching(/already started before an interruption/)],
    ['first-2', null],
  ]);
  expect(frames.find((frame) => frame.type === 'done')?.payload.text).toBe('On it. Noted.');
  // The round now holds its outcomes, and its results follow it: the model saw them in that order.
  const stored = await models.Message.findOne({ where: { id: round } });
  expect((stored!.tool_calls as { tool_call_id: string; error: string | null }[]).map((call) => [call.tool_call_id, call.error === null])).toEqual([
    ['first-1', false],
    ['first-2', true],
  ]);
  const sent = provider.requests.at(-1)!.messages;
  expect(sent.slice(-3).map((entry) => [entry.role, (entry as { toolCallId?: string }).toolCallId ?? null])).toEqual([
    ['assistant', null],
    ['tool', 'first-1'],
    ['tool', 'first-2'],
  ]);
});

it('a redelivered turn resumes after its stored tool rounds instead of calling the tools again', async () => {
  const session = await newSession();
  await models.Session.update({ active_tools: ['lookup'] }, { where: { id: session.id } });
  const message = await accept(session.id, 'look it up');
  // Stored by the first delivery: the model's tool round and the tool's result.
  const base = { session_id: session.id, workflow_id: null, mode: null, reply_to: null, turn_id: message.id };
  await models.Message.create({
    ...base,
    id: randomUUID(),
    role: 'assistant',
    content: '',
    tool_calls: [{ id: 'l1', name: 'lookup', arguments: '{"word":"a"}' }],
    metadata: {},
  });
  await models.Message.create({
    ...base,
    id: randomUUID(),
    role: 'tool',
    content: '{"ok":true}',
    tool_calls: [],
    metadata: { tool_call_id: 'l1', name: 'lookup' },
  });
  provider.rounds = [{ text: ['Resumed.'] }];
  tools.runs.length = 0;
  await worker.handle({ sessionId: session.id, userMessageId: message.id }, { signal });
  const sent = provider.requests.at(-1)!.messages;
  expect(sent.slice(-2)).toEqual([
    { role: 'assistant', content: '', toolCalls: [{ id: 'l1', name: 'lookup', arguments: '{"word":"a"}' }] },
    { role: 'tool', toolCallId: 'l1', name: 'lookup', content: '{"ok":true}' },
  ]);
  expect(tools.runs).toEqual([]);
});

it.each([
  ['unreachable', 'PROVIDER_UNREACHABLE'],
  ['failed', 'PROVIDER_ERROR'],
] as const)('a provider that is %s ends the turn with %s, agent_state error, then idle', async (kind, code) => {
  const session = await newSession();
  const message = await accept(session.id, 'hello?');
  provider.failAt = 0;
  provider.failWith = new ProviderError(kind, kind === 'unreachable' ? 'connection refused' : 'HTTP 500');
  try {
    await worker.handle({ sessionId: session.id, userMessageId: message.id }, { signal });
  } finally {
    provider.failAt = null;
    provider.failWith = null;
  }
  const frames = await framesOf(session.id);
  const error = frames.find((frame) => frame.type === 'error')!;
  expect(error.payload.code).toBe(code);
  expect(frames.filter((frame) => frame.seq > error.seq).map((frame) => frame.type === 'agent_state' && frame.payload.state)).toEqual(['error', 'idle']);
  expect(await registry.get(session.id)).toBeNull();
});

it('a redelivered turn counts the tool rounds it stored against its limit: past max_steps a call is refused, never run', async () => {
  const session = await newSession();
  await models.Session.update({ active_tools: ['lookup'], config: { max_steps: 1 } }, { where: { id: session.id } });
  const message = await accept(session.id, 'look it up');
  // The first delivery ran its one round (stored with its result), then the worker died.
  const base = { session_id: session.id, workflow_id: null, mode: null, reply_to: null, turn_id: message.id };
  await models.Message.create({
    ...base,
    id: randomUUID(),
    role: 'assistant',
    content: '',
    tool_calls: [
      { tool_call_id: 'r1', tool_name: 'lookup', input: { word: 'a' }, output: '{"ok":true}', duration_ms: 1, error: null, arguments: '{"word":"a"}' },
    ],
    metadata: {},
  });
  await models.Message.create({
    ...base,
    id: randomUUID(),
    role: 'tool',
    content: '{"ok":true}',
    tool_calls: [],
    metadata: { tool_call_id: 'r1', name: 'lookup' },
  });
  await registry.update(session.id, message.id, { phase: 'running' });
  provider.rounds = [{ calls: [{ id: 'r2', name: 'lookup', arguments: '{"word":"b"}' }] }];
  const calls = provider.requests.length;
  tools.runs.length = 0;
  await worker.handle({ sessionId: session.id, userMessageId: message.id }, { signal });
  expect(provider.requests.slice(calls).map((request) => (request.tools ?? []).length)).toEqual([0]);
  expect(tools.runs).toEqual([]);
  const end = (await framesOf(session.id)).find((frame) => frame.type === 'tool_end');
  expect(end?.payload).toMatchObject({ tool_call_id: 'r2', error: expect.stringMatching(/tool-round limit \(1\)/) });
  expect((await framesOf(session.id)).some((frame) => frame.type === 'done')).toBe(true);
});

it('an attempt taken over while it ran, whose turn the other attempt released, does not say done a second time', async () => {
  const session = await newSession();
  const message = await accept(session.id, 'taken over');
  const job = { sessionId: session.id, userMessageId: message.id };
  await worker.handle(job, { signal });
  const firstDone = (await framesOf(session.id)).filter((frame) => frame.type === 'done');
  expect(firstDone).toHaveLength(1);
  // The turn was listed again (a sweep after a Redis restart read it before the reply was stored),
  // so a second attempt takes it; the first attempt releases it before the second one gets there.
  expect(await registry.claim(session.id, message.id)).toBe(true);
  const releasedByTheOther = Object.assign(Object.create(registry) as InProcessTurnRegistry, {
    release: async (sessionId: string, turnId: string) => {
      await registry.release(sessionId, turnId);
      return false;
    },
  });
  const service = new TurnService({
    store,
    registry: releasedByTheOther,
    queue: { name: 'in-process', enqueue: async () => undefined } as never,
    events,
    control,
    logger,
    hasWorkflow: async () => false,
    pickup: new PickupWatch({ registry, events, workers: new InProcessWorkerPresence(), logger }, { warnAfterMs: 60_000, sweepMs: 60_000 }),
  });
  const second = workerFor(service);
  await second.handle(job, { signal });
  expect((await framesOf(session.id)).filter((frame) => frame.type === 'done')).toHaveLength(1);
  expect(await registry.get(session.id)).toBeNull();
});
