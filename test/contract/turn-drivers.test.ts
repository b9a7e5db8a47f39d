import { randomUUID } from 'node:crypto';
import type { ControlBus, ControlMessage, EventLog, TurnJob, TurnQueue } from '../../src/core/turns';
import type { SessionFrame } from '../../src/core/events';
import { InProcessControlBus } from '../../src/events/in-process-control-bus';
import { InProcessEventLog } from '../../src/events/in-process-event-log';
import { RedisControlBus } from '../../src/events/redis-control-bus';
import { RedisEventLog } from '../../src/events/redis-event-log';
import { EVENT_LOG_DEFAULTS } from '../../src/events/retention';
import { createLogger } from '../../src/logs/logger';
import { InProcessTurnQueue } from '../../src/queue/in-process-turn-queue';
import { RedisTurnQueue } from '../../src/queue/redis-turn-queue';
import { createRedis } from '../../src/redis/connection';
import { LogCapture } from '../helpers/log-capture';
import { TEST_REDIS_URL, deleteKeys, uniquePrefix } from '../helpers/redis';

/**
 * One contract, two drivers: the in-process ones (embedded default) and the Redis ones (BullMQ,
 * Streams, pub/sub) against the real Redis of this machine. Never skipped.
 */
interface Drivers {
  queue: TurnQueue;
  events: EventLog;
  control: ControlBus;
  /** A second process's view of the same bus (Redis: other connections). */
  otherEvents: EventLog;
  otherControl: ControlBus;
  close(): Promise<void>;
}

/** The turn retry policy, with delays short enough for a test. */
const SHORT_RETRIES = { attempts: 2, unreachableAttempts: 4, firstDelayMs: 20, maxDelayMs: 40 };

const logger = createLogger({ level: 'warn', format: 'json', name: 'test', destination: new LogCapture() });
const shortRetention = { ...EVENT_LOG_DEFAULTS, retentionAfterDisconnectMs: 300, retentionAfterAppendMs: 300, maxFramesPerSession: 50 };

function inProcess(): Drivers {
  const events = new InProcessEventLog(shortRetention);
  const control = new InProcessControlBus();
  const queue = new InProcessTurnQueue(logger, { retries: SHORT_RETRIES, rememberFinished: 100 });
  return {
    queue,
    events,
    control,
    otherEvents: events,
    otherControl: control,
    close: async () => {
      await queue.close();
      await events.close();
      await control.close();
    },
  };
}

function redis(): Drivers {
  const prefix = uniquePrefix('drivers');
  const connections = Array.from({ length: 6 }, (_, i) => createRedis(TEST_REDIS_URL, logger, `test-${i}`, { blocking: i % 2 === 1 }));
  const [c0, s0, c1, s1, c2, s2] = connections as [any, any, any, any, any, any];
  const events = new RedisEventLog(c0, s0, prefix, shortRetention);
  const otherEvents = new RedisEventLog(c1, s1, prefix, shortRetention);
  const control = new RedisControlBus(c2, s2, prefix);
  const bullmq = createRedis(TEST_REDIS_URL, logger, 'bullmq', { blocking: true });
  connections.push(bullmq);
  const otherControl = new RedisControlBus(c1, s1, prefix);
  const queue = new RedisTurnQueue(
    { connection: bullmq, prefix: `${prefix}:bull`, lockDurationMs: 2_000, stalledIntervalMs: 1_000, stopTimeoutMs: 2_000, retries: SHORT_RETRIES },
    logger,
  );
  return {
    queue,
    events,
    control,
    otherEvents,
    otherControl,
    close: async () => {
      await queue.close();
      for (const connection of connections) connection.disconnect();
      await deleteKeys(prefix);
    },
  };
}

const body = (text: string) => ({ type: 'token' as const, payload: { text, final: false } });

function collect(log: EventLog, sessionId: string): Promise<{ frames: SessionFrame[]; stop: () => void }> {
  const frames: SessionFrame[] = [];
  return log.subscribe(sessionId, (frame) => frames.push(frame)).then((stop) => ({ frames, stop }));
}

async function eventually(check: () => boolean, timeoutMs = 5_000): Promise<void> {
  const started = Date.now();
  while (!check()) {
    if (Date.now() - started > timeoutMs) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe.each([
  ['in-process', inProcess],
  ['redis', redis],
])('turn drivers contract: %s', (_name, make) => {
  let drivers: Drivers;

  beforeEach(() => {
    drivers = make();
  });

  afterEach(async () => {
    await drivers.close();
  });

  describe('EventLog', () => {
    it('numbers frames per session from 1, gapless, in the spec envelope order', async () => {
      const a = randomUUID();
      const b = randomUUID();
      const first = await drivers.events.append(a, body('x'));
      await drivers.events.append(b, body('y'));
      const second = await drivers.events.append(a, { type: 'agent_state', payload: { state: 'thinking' } });
      expect([first.seq, second.seq]).toEqual([1, 2]);
      expect(Object.keys(first)).toEqual(['type', 'session_id', 'payload', 'seq', 'ts']);
      expect(first).toMatchObject({ type: 'token', session_id: a, payload: { text: 'x', final: false } });
      expect(first.ts).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    });

    it('replays the frames after a seq, completely, and says when they are gone', async () => {
      const id = randomUUID();
      for (const text of ['a', 'b', 'c', 'd']) await drivers.events.append(id, body(text));
      const replay = await drivers.events.replay(id, 1);
      expect(replay.complete).toBe(true);
      expect(replay.frames.map((frame) => frame.seq)).toEqual([2, 3, 4]);
      expect((await drivers.events.replay(id, 4)).frames).toEqual([]);
      expect((await drivers.events.replay(id, 4)).complete).toBe(true);
      // A fresh page (last_seq = -1) gets everything still kept.
      expect((await drivers.events.replay(id, -1)).frames.map((frame) => frame.seq)).toEqual([1, 2, 3, 4]);
      expect((await drivers.events.replay(id, 0)).frames.map((frame) => frame.seq)).toEqual([1, 2, 3, 4]);
    });

    it('forgets frames after the retention window once nobody listens, but keeps counting', async () => {
      const id = randomUUID();
      const { stop } = await collect(drivers.events, id);
      await drivers.events.append(id, body('a'));
      await drivers.events.append(id, body('b'));
      stop();
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(await drivers.events.replay(id, 0)).toEqual({ frames: [], complete: false });
      expect((await drivers.events.append(id, body('c'))).seq).toBe(3);
    });

    it('forgets the frames of a session nobody ever watched, the append retention after the last one', async () => {
      // A REST message without a socket: the worker appends, no one subscribes (in-process kept them forever).
      const id = randomUUID();
      await drivers.events.append(id, body('a'));
      await drivers.events.append(id, body('b'));
      expect((await drivers.events.replay(id, -1)).frames.map((frame) => frame.seq)).toEqual([1, 2]);
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(await drivers.events.replay(id, -1)).toEqual({ frames: [], complete: true });
      expect(await drivers.events.replay(id, 0)).toEqual({ frames: [], complete: false });
      expect((await drivers.events.append(id, body('c'))).seq).toBe(3);
    });

    it('keeps at most the configured number of frames', async () => {
      const id = randomUUID();
      for (let i = 0; i < 80; i += 1) await drivers.events.append(id, body(String(i)));
      const replay = await drivers.events.replay(id, 0);
      expect(replay.complete).toBe(false);
      const recent = await drivers.events.replay(id, 75);
      expect(recent.frames.map((frame) => frame.seq)).toEqual([76, 77, 78, 79, 80]);
    });

    it('keeps at most the configured number of frames when they come in one batch', async () => {
      const id = randomUUID();
      await drivers.events.appendAll(
        id,
        Array.from({ length: 120 }, (_, i) => body(String(i))),
      );
      expect((await drivers.events.replay(id, 0)).complete).toBe(false);
      expect((await drivers.events.replay(id, -1)).frames.map((frame) => frame.seq)).toEqual(Array.from({ length: 50 }, (_, i) => i + 71));
      const recent = await drivers.events.replay(id, 115);
      expect(recent.frames.map((frame) => [frame.seq, (frame.payload as { text: string }).text])).toEqual(
        [116, 117, 118, 119, 120].map((seq) => [seq, String(seq - 1)]),
      );
    });

    it('raises its counter when a client is ahead (the log lost its counter)', async () => {
      const id = randomUUID();
      expect(await drivers.events.replay(id, 41)).toEqual({ frames: [], complete: false });
      expect((await drivers.events.append(id, body('after restart'))).seq).toBe(42);
    });

    it('appends a batch in call order among single appends, as one by one would number them, in scripts of any size', async () => {
      const id = randomUUID();
      const there = await collect(drivers.otherEvents, id);
      const texts = Array.from({ length: 600 }, (_, i) => `t${i}`); // more than one Redis script holds
      const before = drivers.events.append(id, body('before'));
      const all = drivers.events.appendAll(id, texts.map(body));
      const after = drivers.events.append(id, body('after'));
      await expect(all).resolves.toBeUndefined();
      expect([(await before).seq, (await after).seq]).toEqual([1, 602]);
      await eventually(() => there.frames.length === 602);
      expect(there.frames.map((frame) => frame.seq)).toEqual(Array.from({ length: 602 }, (_, i) => i + 1));
      expect(there.frames.map((frame) => (frame.payload as { text: string }).text)).toEqual(['before', ...texts, 'after']);
      const batch = there.frames.slice(1, 601);
      expect(new Set(batch.map((frame) => frame.ts)).size).toBe(1); // made at one instant
      expect(Object.keys(batch[0]!)).toEqual(['type', 'session_id', 'payload', 'seq', 'ts']);
      expect(batch[0]).toMatchObject({ type: 'token', session_id: id, payload: { text: 't0', final: false } });
      expect((await drivers.events.replay(id, 599)).frames.map((frame) => frame.seq)).toEqual([600, 601, 602]);
      await expect(drivers.events.appendAll(id, [])).resolves.toBeUndefined();
      expect((await drivers.events.append(id, body('next'))).seq).toBe(603);
      there.stop();
    });

    it('tails live frames to every subscriber, from any process, in order', async () => {
      const id = randomUUID();
      const here = await collect(drivers.events, id);
      const there = await collect(drivers.otherEvents, id);
      for (let i = 0; i < 20; i += 1) await drivers.events.append(id, body(String(i)));
      await eventually(() => here.frames.length === 20 && there.frames.length === 20);
      expect(there.frames.map((frame) => frame.seq)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
      here.stop();
      there.stop();
    });
  });

  describe('ControlBus', () => {
    it('delivers a message to subscribers on every process', async () => {
      const seen: ControlMessage[] = [];
      const seenElsewhere: ControlMessage[] = [];
      const stopA = await drivers.control.subscribe((message) => seen.push(message));
      const stopB = await drivers.otherControl.subscribe((message) => seenElsewhere.push(message));
      const message: ControlMessage = { kind: 'cancel', sessionId: randomUUID(), turnId: randomUUID() };
      await drivers.control.publish(message);
      await eventually(() => seen.length === 1 && seenElsewhere.length === 1);
      expect(seenElsewhere).toEqual([message]);
      stopA();
      stopB();
    });
  });

  describe('TurnQueue', () => {
    it('delivers each job once, even when enqueued twice with the same message id', async () => {
      const handled: TurnJob[] = [];
      drivers.queue.consume(async (job) => void handled.push(job), { concurrency: 2 });
      const job = { sessionId: randomUUID(), userMessageId: randomUUID() };
      await drivers.queue.enqueue(job);
      await drivers.queue.enqueue(job);
      const other = { sessionId: job.sessionId, userMessageId: randomUUID() };
      await drivers.queue.enqueue(other);
      await eventually(() => handled.length === 2);
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(handled).toEqual(expect.arrayContaining([job, other]));
      expect(handled).toHaveLength(2);
    });

    it('retries a job whose handler failed', async () => {
      let calls = 0;
      drivers.queue.consume(
        async () => {
          calls += 1;
          if (calls === 1) throw new Error('database briefly away');
        },
        { concurrency: 1 },
      );
      await drivers.queue.enqueue({ sessionId: randomUUID(), userMessageId: randomUUID() });
      await eventually(() => calls === 2, 10_000);
    });

    it.each([
      ['a fault of the turn', () => new Error('the turn broke'), SHORT_RETRIES.attempts],
      [
        'the database out of reach',
        () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }),
        SHORT_RETRIES.unreachableAttempts,
      ],
    ])('tries a job that keeps failing (%s) as often as that failure allows, then gives it up once', async (_label, failure, attempts) => {
      let calls = 0;
      const givenUp: TurnJob[] = [];
      drivers.queue.consume(
        async () => {
          calls += 1;
          throw failure();
        },
        { concurrency: 1, onGiveUp: async (job) => void givenUp.push(job) },
      );
      const job = { sessionId: randomUUID(), userMessageId: randomUUID() };
      await drivers.queue.enqueue(job);
      await eventually(() => givenUp.length === 1, 10_000);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(calls).toBe(attempts);
      expect(givenUp).toEqual([job]);
    });

    it('runs at most `concurrency` jobs at a time in one consumer', async () => {
      let running = 0;
      let peak = 0;
      let done = 0;
      drivers.queue.consume(
        async () => {
          running += 1;
          peak = Math.max(peak, running);
          await new Promise((resolve) => setTimeout(resolve, 30));
          running -= 1;
          done += 1;
        },
        { concurrency: 2 },
      );
      for (let i = 0; i < 6; i += 1) await drivers.queue.enqueue({ sessionId: randomUUID(), userMessageId: randomUUID() });
      await eventually(() => done === 6);
      expect(peak).toBe(2);
    });
  });
});
