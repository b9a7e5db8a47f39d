import { randomUUID } from 'node:crypto';
import type { TurnJob, TurnRegistry } from '../../src/core/turns';
import { openDatabase, type Database } from '../../src/db/database';
import { migrateToLatest } from '../../src/db/migrator';
import { initModels, type Models } from '../../src/db/models';
import { SqliteTurnStore } from '../../src/db/sqlite/sqlite-turn-store';
import { InProcessControlBus } from '../../src/events/in-process-control-bus';
import { InProcessEventLog } from '../../src/events/in-process-event-log';
import { InProcessTurnRegistry } from '../../src/events/in-process-turn-registry';
import { RedisTurnRegistry } from '../../src/events/redis-turn-registry';
import { InProcessWorkerPresence } from '../../src/events/worker-presence';
import { createLogger } from '../../src/logs/logger';
import { InProcessTurnQueue } from '../../src/queue/in-process-turn-queue';
import { createRedis } from '../../src/redis/connection';
import { PickupWatch } from '../../src/turns/pickup-watch';
import { TurnService } from '../../src/turns/turn-service';
import { LogCapture } from '../helpers/log-capture';
import { deleteKeys, TEST_REDIS_URL, uniquePrefix } from '../helpers/redis';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir';

/**
 * Messages that wait behind a turn (mid-turn `queue`) get their turns in order, and a message that
 * arrives in the moment between the turn's end and the start of the next waiting one waits behind
 * them too. It used to claim the freed session and start first; its turn then answered the older
 * waiting messages with its own (a backlog is merged into the turn that finds it), so in a burst of
 * 50 Telegram messages some were never answered on their own (telegram-burst.test.ts, under load).
 */
const logger = createLogger({ level: 'warn', format: 'json', name: 'test', destination: new LogCapture() });
const prefix = uniquePrefix('handover');
const redis = createRedis(TEST_REDIS_URL, logger, 'handover-commands', { autoPipelining: true });
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
  await deleteKeys(prefix);
  removeTempDirs();
});

describe.each([
  ['in-process', (): TurnRegistry => new InProcessTurnRegistry()],
  ['redis', (): TurnRegistry => new RedisTurnRegistry(redis, prefix)],
] as const)('the next waiting message gets the session (%s)', (_driver, make) => {
  const registry = make();
  const events = new InProcessEventLog();
  const queue = new InProcessTurnQueue(logger);
  const started: string[] = [];
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
    // Records which turns reach a worker, in order; ends none (the test ends them).
    queue.consume(async (job: TurnJob) => void started.push(job.userMessageId), { concurrency: 1 });
  });

  afterAll(async () => {
    await queue.close();
  });

  const newSession = async () =>
    (
      await models.Session.create({
        id: randomUUID(),
        name: 'burst',
        owner_id: 'u1',
        channel: 'telegram',
        session_key: null,
        active_workflow_id: null,
        config: {},
        active_tools: [],
        current_turn_id: null,
        turn_phase: null,
        archived_at: null,
      })
    ).id;
  const send = (sessionId: string, text: string) => service.accept({ sessionId, text, mode: 'normal', metadata: {}, policy: 'queue' });

  it("a message arriving between a turn's release and the next turn's start waits behind the older ones", async () => {
    const sessionId = await newSession();
    const first = await send(sessionId, 'first');
    const waiting = await send(sessionId, 'second');
    expect([first.disposition, waiting.disposition]).toEqual(['started', 'queued']);
    // The first turn ends; its ender is between freeing the session and starting the next turn.
    await store.endTurn({ sessionId, turnId: first.message.id, reply: null, usage: { inputTokens: 0, outputTokens: 0 } });
    expect(await registry.release(sessionId, first.message.id)).toEqual({ waiting: true });
    const newcomer = await send(sessionId, 'third');
    expect(newcomer.disposition).toBe('queued');
    // The ender goes on: the oldest waiting message is next, the newcomer after it.
    expect(await service.lifecycle.startNext(sessionId, first.message.id)).toBe(waiting.message.id);
    await service.lifecycle.finish({ sessionId, turnId: waiting.message.id }, { reply: null, usage: { inputTokens: 0, outputTokens: 0 } });
    expect((await registry.get(sessionId))?.turnId).toBe(newcomer.message.id);
    await service.lifecycle.finish({ sessionId, turnId: newcomer.message.id }, { reply: null, usage: { inputTokens: 0, outputTokens: 0 } });
    expect(await registry.get(sessionId)).toBeNull();
    await new Promise((resolve) => setImmediate(resolve));
    expect(started.slice(-3)).toEqual([first.message.id, waiting.message.id, newcomer.message.id]);
  });

  it('a burst is answered one turn per message, in order, however the ends and arrivals interleave', async () => {
    const sessionId = await newSession();
    const accepted = [await send(sessionId, 'm0')];
    const finishing: Promise<unknown>[] = [];
    for (let n = 1; n < 20; n += 1) {
      // Every other message arrives while the running turn ends.
      const live = await registry.get(sessionId);
      if (n % 2 === 0 && live?.phase === 'queued') {
        finishing.push(service.lifecycle.finish({ sessionId, turnId: live.turnId }, { reply: null, usage: { inputTokens: 0, outputTokens: 0 } }));
      }
      accepted.push(await send(sessionId, `m${n}`));
    }
    await Promise.all(finishing);
    for (let guard = 0; guard < 40; guard += 1) {
      const live = await registry.get(sessionId);
      if (!live) break;
      if (live.phase === 'queued')
        await service.lifecycle.finish({ sessionId, turnId: live.turnId }, { reply: null, usage: { inputTokens: 0, outputTokens: 0 } });
    }
    await new Promise((resolve) => setImmediate(resolve));
    const ids = accepted.map((entry) => entry.message.id);
    expect(started.filter((id) => ids.includes(id))).toEqual(ids);
  });
});
