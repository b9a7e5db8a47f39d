import { randomUUID } from 'node:crypto';
import type { SessionFrame } from '../../src/core/events';
import { RedisEventLog } from '../../src/events/redis-event-log';
import { createLogger } from '../../src/logs/logger';
import { createRedis } from '../../src/redis/connection';
import { LogCapture } from '../helpers/log-capture';
import { TEST_REDIS_URL, deleteKeys, uniquePrefix } from '../helpers/redis';
import { RedisReplyDropProxy } from '../helpers/redis-proxy';

/**
 * An append whose answer was lost: Redis ran the script, then the connection dropped before the
 * answer was back (a Redis restart), and ioredis sent it again once reconnected, so it ran again.
 * It stored its frames a second time under new seqs, and published them again: a client saw a token,
 * or a turn's `done`, twice (2026-11-29: 15 frames of 74,437 stored twice across five restarts of a
 * Redis under appends). The proxy loses exactly one answer, deterministically.
 */
const logger = createLogger({ level: 'warn', format: 'json', name: 'test', destination: new LogCapture() });
const prefix = uniquePrefix('event-resend');
const target = new URL(TEST_REDIS_URL);
const proxy = new RedisReplyDropProxy({ host: target.hostname, port: Number(target.port || 6379) });
let commands: ReturnType<typeof createRedis>;
let subscriber: ReturnType<typeof createRedis>;
let log: RedisEventLog;

beforeAll(async () => {
  // The hub's own connection settings (src/compose/drivers.ts); only the commands go through the proxy.
  commands = createRedis(await proxy.start(), logger, 'commands', { autoPipelining: true });
  subscriber = createRedis(TEST_REDIS_URL, logger, 'subscriber', { blocking: true });
  log = new RedisEventLog(commands, subscriber, prefix);
});

afterAll(async () => {
  commands.disconnect();
  subscriber.disconnect();
  await proxy.stop();
  await deleteKeys(prefix);
});

function token(text: string) {
  return { type: 'token' as const, payload: { turn_id: 't1', text, final: false } };
}

async function stored(session: string): Promise<[number, string][]> {
  const { frames } = await log.replay(session, -1);
  return frames.map((frame) => [frame.seq, String((frame.payload as { text?: string }).text)]);
}

it('an append whose answer was lost, run again, is stored and published once, under its first seq', async () => {
  const session = randomUUID();
  const live: SessionFrame[] = [];
  const unsubscribe = await log.subscribe(session, (frame) => void live.push(frame));
  await log.append(session, token('before'));
  const marker = randomUUID();
  const dropped = proxy.dropNextReply(marker);
  const appended = await log.append(session, token(marker));
  await dropped;
  expect(proxy.sent(marker)).toBeGreaterThanOrEqual(2); // it did run twice
  expect(appended.seq).toBe(2);
  await log.append(session, token('after'));
  expect(await stored(session)).toEqual([
    [1, 'before'],
    [2, marker],
    [3, 'after'],
  ]);
  // Every frame published has arrived once the last one has (one connection, in order); a second
  // publication of the resent one would have come before it.
  for (let waited = 0; live.length < 3 && waited < 5_000; waited += 20) await new Promise((resolve) => setTimeout(resolve, 20));
  expect(live.map((frame) => frame.seq)).toEqual([1, 2, 3]);
  unsubscribe();
});

it('a batch whose answer was lost, run again, keeps its frames once and in order', async () => {
  const session = randomUUID();
  const marker = randomUUID();
  const dropped = proxy.dropNextReply(marker);
  await log.appendAll(session, [token('a'), token(marker), token('c')]);
  await dropped;
  expect(proxy.sent(marker)).toBeGreaterThanOrEqual(2);
  await log.append(session, token('d'));
  expect(await stored(session)).toEqual([
    [1, 'a'],
    [2, marker],
    [3, 'c'],
    [4, 'd'],
  ]);
});

it('appends of another process to the same session are not taken for a resent one', async () => {
  const session = randomUUID();
  // A second log (another process) appending to the same session: its append ids are its own.
  const otherCommands = createRedis(TEST_REDIS_URL, logger, 'other');
  const other = new RedisEventLog(otherCommands, subscriber, prefix);
  try {
    for (let index = 0; index < 5; index += 1) {
      await log.append(session, token(`mine ${index}`));
      await other.append(session, token(`other ${index}`));
    }
    expect((await stored(session)).map(([seq]) => seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  } finally {
    otherCommands.disconnect();
  }
});
