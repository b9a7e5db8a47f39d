import { randomUUID } from 'node:crypto';
import type { ErrorCode } from '../../src/core/errors';
import type { AgentEvent, DonePayload, SessionFrame } from '../../src/core/events';
import { followTurn, TurnOutcomeTracker, type TurnOutcome } from '../../src/core/follow-turn';
import type { EventLog, TurnRegistry } from '../../src/core/turns';
import { openDatabase, type Database } from '../../src/db/database';
import { migrateToLatest } from '../../src/db/migrator';
import { initModels, type Models } from '../../src/db/models';
import { SqliteTurnStore } from '../../src/db/sqlite/sqlite-turn-store';
import { InProcessEventLog } from '../../src/events/in-process-event-log';
import { InProcessTurnRegistry } from '../../src/events/in-process-turn-registry';
import { RedisEventLog } from '../../src/events/redis-event-log';
import { RedisTurnRegistry } from '../../src/events/redis-turn-registry';
import { InProcessWorkerPresence } from '../../src/events/worker-presence';
import { InProcessControlBus } from '../../src/events/in-process-control-bus';
import { createLogger } from '../../src/logs/logger';
import { InProcessTurnQueue } from '../../src/queue/in-process-turn-queue';
import { createRedis } from '../../src/redis/connection';
import { PickupWatch } from '../../src/turns/pickup-watch';
import { endingFrames, type OpenToolCall, type TurnEnding } from '../../src/turns/turn-endings';
import type { TurnLifecycle, TurnRef } from '../../src/turns/turn-lifecycle';
import { TurnService } from '../../src/turns/turn-service';
import { LogCapture } from '../helpers/log-capture';
import { deleteKeys, TEST_REDIS_URL, uniquePrefix } from '../helpers/redis';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir';

/**
 * One writer and one reader of how a turn ends: every ending src/turns writes (endingFrames, through
 * TurnLifecycle) is read back by TurnOutcomeTracker (src/core/follow-turn.ts) as the outcome named in
 * the table, decided at its last frame and not before. Then the same endings through each real entry
 * point of the lifecycle, the real event logs and registries (in-process and Redis) and followTurn.
 */
const done: DonePayload = {
  message_id: 'reply-1',
  total_tokens: 9,
  input_tokens: 7,
  output_tokens: 2,
  duration_ms: 12,
  tool_calls: 1,
  text: 'Hello.',
  workflow: null,
  routing_reason: 'default',
};
/** The outcome of a `done`: its payload, with the turn's id every frame of a turn carries. */
const answered: TurnOutcome = { kind: 'done', done: { ...done, turn_id: expect.any(String) } };
const openCall = (id: string): OpenToolCall => ({ toolCallId: id, toolName: 'save_note', durationMs: 5 });

/** A frame as the table spells it: its type and what tells it apart (state, error code, tool error). */
type Spelled = [AgentEvent['type'], string | null];

interface Row {
  ending: TurnEnding;
  open: OpenToolCall[];
  frames: Spelled[];
  outcome: TurnOutcome;
}

const failure = (code: ErrorCode, message: string): TurnOutcome => ({ kind: 'error', code, message });

const TABLE: Record<string, Row> = {
  done: {
    ending: { kind: 'done', done },
    open: [],
    frames: [
      ['agent_state', 'done'],
      ['done', null],
    ],
    outcome: answered,
  },
  'done, memory updated': {
    ending: { kind: 'done', done, memory: { mode: 'conversation', tokensUsed: 120, summarized: true } },
    open: [],
    frames: [
      ['memory_update', null],
      ['agent_state', 'done'],
      ['done', null],
    ],
    outcome: answered,
  },
  cancelled: {
    ending: { kind: 'cancelled' },
    open: [],
    frames: [
      ['agent_state', 'idle'],
      ['error', 'CANCELLED'],
    ],
    outcome: { kind: 'cancelled' },
  },
  'cancelled, two tool calls open': {
    ending: { kind: 'cancelled' },
    open: [openCall('a'), openCall('b')],
    frames: [
      ['tool_end', 'CANCELLED'],
      ['tool_end', 'CANCELLED'],
      ['agent_state', 'idle'],
      ['error', 'CANCELLED'],
    ],
    outcome: { kind: 'cancelled' },
  },
  failed: {
    ending: { kind: 'failed', code: 'PROVIDER_ERROR', message: 'The model provider failed: HTTP 500' },
    open: [],
    frames: [
      ['error', 'PROVIDER_ERROR'],
      ['agent_state', 'error'],
      ['agent_state', 'idle'],
    ],
    outcome: failure('PROVIDER_ERROR', 'The model provider failed: HTTP 500'),
  },
  'failed, a tool call open': {
    ending: { kind: 'failed', code: 'INTERNAL_ERROR', message: 'The agent failed: an internal error occurred.' },
    open: [openCall('c')],
    frames: [
      ['tool_end', 'INTERNAL_ERROR'],
      ['error', 'INTERNAL_ERROR'],
      ['agent_state', 'error'],
      ['agent_state', 'idle'],
    ],
    outcome: failure('INTERNAL_ERROR', 'The agent failed: an internal error occurred.'),
  },
  'given up': {
    ending: { kind: 'given_up' },
    open: [],
    frames: [
      ['error', 'INTERNAL_ERROR'],
      ['agent_state', 'error'],
      ['agent_state', 'idle'],
    ],
    outcome: failure('INTERNAL_ERROR', 'The agent failed: an internal error occurred.'),
  },
  dropped: { ending: { kind: 'dropped' }, open: [], frames: [['error', 'CANCELLED']], outcome: { kind: 'dropped' } },
};

function spell(frame: AgentEvent): Spelled {
  switch (frame.type) {
    case 'agent_state':
      return [frame.type, frame.payload.state];
    case 'error':
      return [frame.type, frame.payload.code];
    case 'tool_end':
      return [frame.type, frame.payload.error];
    case 'token':
    case 'tool_start':
    case 'tool_confirm_request':
    case 'memory_update':
    case 'done':
      return [frame.type, null];
  }
}

/** What the reader says after each frame, numbered as the log would number them. */
function readBack(frames: readonly AgentEvent[], turnId: string): (TurnOutcome | null)[] {
  const tracker = new TurnOutcomeTracker();
  return frames.map((frame, index) =>
    tracker.next({ ...frame, payload: { ...frame.payload, turn_id: turnId }, session_id: 's', seq: index + 1, ts: new Date(0).toISOString() } as SessionFrame),
  );
}

describe('the writer (endingFrames) and the reader (TurnOutcomeTracker) agree on every ending', () => {
  it.each(Object.entries(TABLE))('%s', (_name, row) => {
    const frames = endingFrames(row.ending, row.open);
    expect(frames.map(spell)).toEqual(row.frames);
    const read = readBack(frames, 'turn-1');
    // Decided at the last frame, not before: a frame that only starts an ending decides nothing.
    expect(read.slice(0, -1)).toEqual(read.slice(0, -1).map(() => null));
    expect(read.at(-1)).toEqual(row.outcome);
  });

  it('closes each open call with its id, tool and time open, before the ending proper', () => {
    const frames = endingFrames({ kind: 'cancelled' }, [openCall('a')]);
    expect(frames[0]).toEqual({ type: 'tool_end', payload: { tool_name: 'save_note', tool_call_id: 'a', duration_ms: 5, error: 'CANCELLED' } });
  });

  it('the reader ends no turn on frames that are not an ending (a notice, an error the turn goes on after)', () => {
    const notEndings: AgentEvent[] = [
      { type: 'error', payload: { code: 'WORKER_UNAVAILABLE', message: 'No worker has started this turn after 30 s.' } },
      { type: 'error', payload: { code: 'TOOL_EXPANSION_FAILED', message: 'Could not load "x".' } },
      { type: 'agent_state', payload: { state: 'done' } },
      { type: 'tool_end', payload: { tool_name: 'save_note', tool_call_id: 'a', duration_ms: 1, error: 'CANCELLED' } },
    ];
    expect(readBack(notEndings, 'turn-1')).toEqual([null, null, null, null]);
  });
});

const logger = createLogger({ level: 'warn', format: 'json', name: 'test', destination: new LogCapture() });
const prefix = uniquePrefix('endings');
const redis = createRedis(TEST_REDIS_URL, logger, 'endings-commands', { autoPipelining: true });
const subscriber = createRedis(TEST_REDIS_URL, logger, 'endings-subscriber', { blocking: true });
let database: Database;
let models: Models;
let store: SqliteTurnStore;

beforeAll(async () => {
  database = await openDatabase({ data_dir: makeTempDir(), database: { url: null, pool_max: 1 } }, logger);
  await migrateToLatest(database);
  models = initModels(database.sequelize);
  store = await SqliteTurnStore.open(database.file!);
});

afterAll(async () => {
  await store.close();
  await database.close();
  redis.disconnect();
  subscriber.disconnect();
  await deleteKeys(prefix);
  removeTempDirs();
});

/** How each ending is written by the lifecycle's own entry points (`events`: the running turn's stream). */
const WRITE: Record<string, (turns: TurnLifecycle, turn: TurnRef, events: ReturnType<TurnLifecycle['events']>, row: Row) => Promise<unknown>> = {
  done: (turns, turn, events, row) => turns.end(turn, null, row.ending, { events }),
  'done, memory updated': (turns, turn, events, row) => turns.end(turn, null, row.ending, { events }),
  cancelled: (turns, turn) => turns.cancelQueued(turn),
  'cancelled, two tool calls open': (turns, turn, events, row) =>
    turns.end(turn, { reply: null, usage: { inputTokens: 3, outputTokens: 1 } }, row.ending, { events }),
  failed: (turns, turn, events, row) => turns.end(turn, { reply: null, usage: { inputTokens: 3, outputTokens: 0 } }, row.ending, { events }),
  'failed, a tool call open': (turns, turn, events, row) =>
    turns.end(turn, { reply: null, usage: { inputTokens: 0, outputTokens: 0 } }, row.ending, { events }),
  'given up': (turns, turn) => turns.giveUp(turn),
  dropped: (turns, turn) => turns.dropped(turn),
};

describe.each([
  ['in-process', (): { events: EventLog; registry: TurnRegistry } => ({ events: new InProcessEventLog(), registry: new InProcessTurnRegistry() })],
  [
    'redis',
    (): { events: EventLog; registry: TurnRegistry } => ({
      events: new RedisEventLog(redis, subscriber, prefix),
      registry: new RedisTurnRegistry(redis, prefix),
    }),
  ],
] as const)('every ending through TurnLifecycle, read back by followTurn (%s)', (_driver, make) => {
  const { events, registry } = make();
  const queue = new InProcessTurnQueue(logger); // never consumed: the turns stay queued until an ending
  let service: TurnService;

  beforeAll(() => {
    service = new TurnService({
      store,
      registry,
      queue,
      events,
      control: new InProcessControlBus(),
      logger,
      hasWorkflow: async () => false,
      pickup: new PickupWatch({ registry, events, workers: new InProcessWorkerPresence(), logger }, { warnAfterMs: 60_000, sweepMs: 60_000 }),
    });
  });

  afterAll(async () => {
    await queue.close();
  });

  it.each(Object.entries(TABLE))('%s', async (name, row) => {
    const session = await models.Session.create({
      id: randomUUID(),
      name,
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
    const { message } = await service.accept({ sessionId: session.id, text: `an ending: ${name}`, mode: 'normal', metadata: {} });
    const turn = { sessionId: session.id, turnId: message.id };
    const followed = await followTurn(events, session.id, turn.turnId, { replay: true });
    const running = service.lifecycle.events(turn);
    for (const call of row.open) await running.send({ type: 'tool_start', payload: { tool_name: call.toolName, tool_call_id: call.toolCallId, input: {} } });
    await WRITE[name]!(service.lifecycle, turn, running, row);
    expect(await followed.outcome).toEqual(row.outcome);
    const written = (await events.replay(session.id, -1)).frames.filter((frame) => frame.type !== 'tool_start' && frame.type !== 'pong');
    expect(written.map((frame) => spell(frame as AgentEvent))).toEqual(row.frames);
    expect(written.every((frame) => frame.payload.turn_id === turn.turnId)).toBe(true);
  });
});
