import { randomUUID } from 'node:crypto';
import { RedisTurnRegistry } from '../../src/events/redis-turn-registry';
import { createLogger } from '../../src/logs/logger';
import { createRedis } from '../../src/redis/connection';
import { LogCapture } from '../helpers/log-capture';
import { TEST_REDIS_URL, deleteKeys, uniquePrefix } from '../helpers/redis';
import { RedisReplyDropProxy } from '../helpers/redis-proxy';

/**
 * The chaos-infra finding, second half (issue 25): Redis restarted while a message was being taken
 * in. The claim of its session ran, its answer was lost with the connection, and ioredis sent the
 * claim again after reconnecting: the second run found the session claimed — by the very same turn —
 * and said no. The client was told TURN_IN_PROGRESS, the claim of a turn that was never stored held
 * the session, and every later message got 409 for the registry's six-hour safety net. A release
 * run twice likewise said "not yours", so a given-up turn never told its client and a turn's
 * waiting messages never started. Here a proxy loses exactly one answer, deterministically.
 */
const logger = createLogger({ level: 'warn', format: 'json', name: 'test', destination: new LogCapture() });
const prefix = uniquePrefix('resend');
const target = new URL(TEST_REDIS_URL);
const proxy = new RedisReplyDropProxy({ host: target.hostname, port: Number(target.port || 6379) });
let redis: ReturnType<typeof createRedis>;
let registry: RedisTurnRegistry;

beforeAll(async () => {
  // The hub's own connection settings (src/main.ts: the `commands` connection).
  redis = createRedis(await proxy.start(), logger, 'commands', { autoPipelining: true });
  registry = new RedisTurnRegistry(redis, prefix);
});

afterAll(async () => {
  redis.disconnect();
  await proxy.stop();
  await deleteKeys(prefix);
});

it('a claim whose answer was lost, run again, is still the claimer’s', async () => {
  const session = randomUUID();
  const turn = randomUUID();
  const dropped = proxy.dropNextReply(session);
  expect(await registry.claim(session, turn)).toBe(true);
  await dropped;
  expect(proxy.sent(session)).toBeGreaterThanOrEqual(2); // it did run twice
  expect(await registry.get(session)).toMatchObject({ turnId: turn, phase: 'queued' });
  // Still one turn per session: another turn, and this one once a worker took it, are refused.
  expect(await registry.claim(session, randomUUID())).toBe(false);
  await registry.update(session, turn, { phase: 'running' });
  expect(await registry.claim(session, turn)).toBe(false);
});

it('a release whose answer was lost, run again, answers what the first run did', async () => {
  const session = randomUUID();
  const turn = randomUUID();
  await registry.claim(session, turn);
  await registry.markWaiting(session); // a message waits behind it: the releaser must start it
  const dropped = proxy.dropNextReply(`${session}`);
  expect(await registry.release(session, turn)).toEqual({ waiting: true });
  await dropped;
  expect(proxy.sent(session)).toBeGreaterThanOrEqual(2);
  // Reserved for the waiting message (handover), once: handed over, the turn's release is refused.
  expect(await registry.get(session)).toMatchObject({ turnId: turn, phase: 'handover' });
  expect(await registry.handOver(session, turn, null, false)).toBe('freed');
  expect(await registry.release(session, turn)).toBe(false);
});

it('a handover whose answer was lost, run again, answers handed', async () => {
  const session = randomUUID();
  const [turn, next] = [randomUUID(), randomUUID()];
  await registry.claim(session, turn);
  await registry.markWaiting(session);
  await registry.release(session, turn);
  const dropped = proxy.dropNextReply(session);
  expect(await registry.handOver(session, turn, next, false)).toBe('handed');
  await dropped;
  expect(await registry.get(session)).toMatchObject({ turnId: next, phase: 'queued' });
});

it('a release that was refused stays refused when it runs again', async () => {
  const session = randomUUID();
  const turn = randomUUID();
  await registry.claim(session, turn);
  await registry.update(session, turn, { phase: 'running' });
  const dropped = proxy.dropNextReply(session);
  // A cancel in the queue loses to the worker that took the turn, also when it is sent twice.
  expect(await registry.release(session, turn, 'queued')).toBe(false);
  await dropped;
  expect(await registry.get(session)).toMatchObject({ turnId: turn, phase: 'running' });
});
