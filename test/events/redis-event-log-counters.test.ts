import { randomUUID } from 'node:crypto';
import { RedisEventLog } from '../../src/events/redis-event-log';
import { EVENT_LOG_DEFAULTS } from '../../src/events/retention';
import { createLogger } from '../../src/logs/logger';
import { createRedis } from '../../src/redis/connection';
import { redisKey } from '../../src/redis/connection';
import { LogCapture } from '../helpers/log-capture';
import { TEST_REDIS_URL, deleteKeys, uniquePrefix } from '../helpers/redis';

/**
 * Redis kept every session's seq counter for ever (issue 25): one key per session that ever had a
 * frame. Counters now expire `counterTtlMs` after the session's last frame or connection, and a
 * session whose counter expired still counts up for a client that comes back with its `last_seq`
 * (EventLog.replay raises the counter past it).
 */
const logger = createLogger({ level: 'warn', format: 'json', name: 'test', destination: new LogCapture() });
const prefix = uniquePrefix('counters');
const commands = createRedis(TEST_REDIS_URL, logger, 'commands', { autoPipelining: true });
const subscriber = createRedis(TEST_REDIS_URL, logger, 'subscriber', { blocking: true });
const seqKey = (sessionId: string) => redisKey(prefix, 'events', sessionId, 'seq');
const frame = { type: 'agent_state', payload: { state: 'idle' } } as const;

afterAll(async () => {
  await deleteKeys(prefix);
  commands.disconnect();
  subscriber.disconnect();
});

it('a counter expires with the default retention, and each frame or connection renews it', async () => {
  const log = new RedisEventLog(commands, subscriber, prefix);
  const sessionId = randomUUID();
  await log.append(sessionId, frame);
  const ttl = await commands.pttl(seqKey(sessionId));
  expect(ttl).toBeGreaterThan(EVENT_LOG_DEFAULTS.counterTtlMs - 60_000);
  expect(ttl).toBeLessThanOrEqual(EVENT_LOG_DEFAULTS.counterTtlMs);
  await commands.pexpire(seqKey(sessionId), 5_000);
  await log.replay(sessionId, 1); // a client connects
  expect(await commands.pttl(seqKey(sessionId))).toBeGreaterThan(5_000);
  // A fresh page on a session that never spoke creates no counter.
  const silent = randomUUID();
  await log.replay(silent, -1);
  expect(await commands.exists(seqKey(silent))).toBe(0);
});

it('after its counter expired, a session still counts up for a client that comes back with its last_seq', async () => {
  const short = { ...EVENT_LOG_DEFAULTS, retentionAfterAppendMs: 200, retentionAfterDisconnectMs: 200, counterTtlMs: 300 };
  const log = new RedisEventLog(commands, subscriber, prefix, short);
  const sessionId = randomUUID();
  let lastSeq = 0;
  for (let index = 0; index < 3; index += 1) lastSeq = (await log.append(sessionId, frame)).seq;
  expect(lastSeq).toBe(3);
  // Gone after its retention (the frames before it).
  const deadline = Date.now() + 10_000;
  while ((await commands.exists(seqKey(sessionId))) === 1 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  expect(await commands.exists(seqKey(sessionId))).toBe(0);
  // The client reconnects: nothing to replay (expired), and what follows counts on from its last_seq.
  expect(await log.replay(sessionId, lastSeq)).toEqual({ frames: [], complete: false });
  const next = await log.append(sessionId, frame);
  expect(next.seq).toBe(lastSeq + 1);
  expect(await commands.pttl(seqKey(sessionId))).toBeGreaterThan(0);
});
