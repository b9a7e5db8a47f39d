import { randomUUID } from 'node:crypto';
import { Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import type { TurnJob } from '../../src/core/turns';
import { createLogger } from '../../src/logs/logger';
import { RedisTurnQueue, TURN_QUEUE_NAME } from '../../src/queue/redis-turn-queue';
import { createRedis } from '../../src/redis/connection';
import { LogCapture } from '../helpers/log-capture';
import { TEST_REDIS_URL, deleteKeys, uniquePrefix } from '../helpers/redis';

/**
 * A turn whose workers keep dying: BullMQ fails its job once it stalled more often than
 * `maxStalledCount` (2), whatever attempts are left. That is the end of the turn, so the queue must
 * give it up (onGiveUp: the session freed, the client told) like a job that failed every attempt;
 * before, it logged "turn job failed" and the turn stayed open forever (found by the chaos run).
 */
const logger = createLogger({ level: 'warn', format: 'json', name: 'test', destination: new LogCapture() });
const prefix = uniquePrefix('stalls');
const connections: Redis[] = [];
const queues: RedisTurnQueue[] = [];

afterAll(async () => {
  await Promise.all(queues.map((queue) => queue.close().catch(() => undefined)));
  for (const connection of connections) connection.disconnect();
  await deleteKeys(prefix);
});

function queue(): RedisTurnQueue {
  const connection = createRedis(TEST_REDIS_URL, logger, 'bullmq', { blocking: true });
  connections.push(connection);
  const created = new RedisTurnQueue({ connection, prefix, lockDurationMs: 400, stalledIntervalMs: 150, stopTimeoutMs: 20 }, logger);
  queues.push(created);
  return created;
}

it('a job that stalled more often than allowed is given up, not left open', async () => {
  const job: TurnJob = { sessionId: randomUUID(), userMessageId: randomUUID(), queuedAt: Date.now() };
  const givenUp: TurnJob[] = [];
  const onGiveUp = async (failed: TurnJob) => {
    givenUp.push(failed);
  };
  await queue().enqueue(job);
  // Three workers in turn take the job and die with it (closed by force: no ack, no lock renewal).
  for (let death = 0; death < 3; death += 1) {
    const connection = createRedis(TEST_REDIS_URL, logger, 'dying', { blocking: true });
    connections.push(connection);
    let taken!: () => void;
    const took = new Promise<void>((resolve) => (taken = resolve));
    const dying = new Worker(TURN_QUEUE_NAME, () => (taken(), new Promise<void>(() => undefined)), {
      connection,
      prefix,
      lockDuration: 400,
      stalledInterval: 150,
      maxStalledCount: 2,
    });
    dying.on('error', () => undefined);
    await took;
    await dying.close(true);
  }
  // A live worker finds the third stall: the job fails, and the turn is given up.
  queue().consume(async () => undefined, { concurrency: 1, onGiveUp });
  const deadline = Date.now() + 15_000;
  while (givenUp.length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  expect(givenUp).toEqual([expect.objectContaining({ sessionId: job.sessionId, userMessageId: job.userMessageId })]);
}, 30_000);
