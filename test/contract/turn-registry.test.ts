import { randomUUID } from 'node:crypto';
import type { TurnRegistry, WorkerPresence } from '../../src/core/turns';
import { InProcessTurnRegistry } from '../../src/events/in-process-turn-registry';
import { RedisTurnRegistry } from '../../src/events/redis-turn-registry';
import { InProcessWorkerPresence, RedisWorkerPresence } from '../../src/events/worker-presence';
import { createLogger } from '../../src/logs/logger';
import { createRedis } from '../../src/redis/connection';
import { LogCapture } from '../helpers/log-capture';
import { TEST_REDIS_URL, deleteKeys, uniquePrefix } from '../helpers/redis';

/** The turn registry and worker presence: one contract, the in-process and the Redis driver. */
const logger = createLogger({ level: 'warn', format: 'json', name: 'test', destination: new LogCapture() });
const prefix = uniquePrefix('registry');
const redis = createRedis(TEST_REDIS_URL, logger, 'registry-test', { autoPipelining: true });

afterAll(async () => {
  await deleteKeys(prefix);
  redis.disconnect();
});

describe.each([
  ['in-process', () => ({ registry: new InProcessTurnRegistry() as TurnRegistry, presence: new InProcessWorkerPresence() as WorkerPresence })],
  ['redis', () => ({ registry: new RedisTurnRegistry(redis, prefix), presence: new RedisWorkerPresence(redis, `${prefix}:${randomUUID()}`) })],
] as const)('turn registry (%s)', (_name, make) => {
  const { registry, presence } = make();

  it('claimOrHolder claims a free session, and answers a refusal with the turn holding it', async () => {
    const session = randomUUID();
    const [first, second] = [randomUUID(), randomUUID()];
    const before = Date.now();
    expect(await registry.claimOrHolder(session, first)).toBe(true);
    expect(await registry.claimOrHolder(session, first)).toBe(true); // the same claim sent again, still queued
    const holder = await registry.claimOrHolder(session, second);
    expect(holder).toEqual(await registry.get(session));
    expect(holder).toMatchObject({ turnId: first, phase: 'queued', state: 'thinking', pending: null });
    expect((holder as { acceptedAt: number }).acceptedAt).toBeGreaterThanOrEqual(before);
    await registry.release(session, first);
    expect(await registry.claimOrHolder(session, second)).toBe(true);
  });

  it('one turn per session: a second claim is refused until the first is released', async () => {
    const session = randomUUID();
    const [first, second] = [randomUUID(), randomUUID()];
    expect(await registry.claim(session, first)).toBe(true);
    expect(await registry.claim(session, second)).toBe(false);
    expect(await registry.get(session)).toMatchObject({ turnId: first, phase: 'queued', state: 'thinking', pending: null, acceptedAt: expect.any(Number) });
    expect(await registry.release(session, second)).toBe(false); // not its turn
    expect(await registry.release(session, first)).toEqual({ waiting: false });
    expect(await registry.get(session)).toBeNull();
    expect(await registry.claim(session, second)).toBe(true);
  });

  it('a claim repeated by the turn that holds the session is granted while it is queued (a resent claim), never after', async () => {
    const session = randomUUID();
    const turn = randomUUID();
    expect(await registry.claim(session, turn)).toBe(true);
    expect(await registry.claim(session, turn)).toBe(true);
    expect(await registry.update(session, turn, { phase: 'running' })).toBe(true);
    expect(await registry.claim(session, turn)).toBe(false);
    expect(await registry.release(session, turn)).toEqual({ waiting: false });
  });

  it('changes apply only to the turn they name', async () => {
    const session = randomUUID();
    const turn = randomUUID();
    await registry.claim(session, turn);
    const pending = { confirmation_id: 'c1', tool: 'write_file', parameters: { path: 'a.txt' }, message: 'Allow?' };
    expect(await registry.update(session, turn, { phase: 'running', state: 'writing', pending })).toBe(true);
    expect(await registry.update(session, randomUUID(), { state: 'done' })).toBe(false);
    expect(await registry.get(session)).toMatchObject({ turnId: turn, phase: 'running', state: 'writing', pending });
    expect(await registry.update(session, turn, { pending: null })).toBe(true);
    expect((await registry.get(session))!.pending).toBeNull();
    expect(await registry.update(randomUUID(), turn, { state: 'writing' })).toBe(false);
  });

  it('a queued turn can be released only while still queued (cancel in the queue vs a worker taking it)', async () => {
    const session = randomUUID();
    const turn = randomUUID();
    await registry.claim(session, turn);
    expect(await registry.update(session, turn, { phase: 'running' })).toBe(true);
    expect(await registry.release(session, turn, 'queued')).toBe(false);
    expect(await registry.release(session, turn)).toEqual({ waiting: false });
  });

  it('a message waiting behind a turn is reported to whoever releases it (mid-turn queue)', async () => {
    const session = randomUUID();
    const turn = randomUUID();
    expect(await registry.markWaiting(session)).toBeNull(); // nothing runs: the caller starts it itself
    await registry.claim(session, turn);
    expect(await registry.markWaiting(session)).toEqual({ turnId: turn, phase: 'queued' });
    await registry.update(session, turn, { phase: 'running' });
    expect(await registry.markWaiting(session)).toEqual({ turnId: turn, phase: 'running' });
    expect((await registry.get(session))!.turnId).toBe(turn);
    expect(await registry.release(session, randomUUID())).toBe(false);
    expect(await registry.release(session, turn)).toEqual({ waiting: true });
    // The flag belongs to that turn: the next one starts without it.
    const next = randomUUID();
    expect(await registry.handOver(session, turn, next, false)).toBe('handed');
    expect(await registry.release(session, next)).toEqual({ waiting: false });
  });

  it('a release with messages waiting reserves the session for them: a newcomer cannot overtake them (handover)', async () => {
    const session = randomUUID();
    const [turn, newcomer, next, after] = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];
    await registry.claim(session, turn);
    await registry.update(session, turn, { phase: 'running', state: 'writing' });
    await registry.markWaiting(session);
    expect(await registry.release(session, turn)).toEqual({ waiting: true });
    expect(await registry.release(session, turn)).toEqual({ waiting: true }); // sent again: the same answer
    // Reserved, between the turn that ran and the next: no turn runs, nobody claims it, nothing changes it.
    expect(await registry.get(session)).toMatchObject({ turnId: turn, phase: 'handover', state: 'idle', pending: null });
    expect(await registry.claim(session, newcomer)).toBe(false);
    expect(await registry.update(session, turn, { phase: 'running' })).toBe(false); // a late worker of the ended turn
    expect(await registry.release(session, turn, 'queued')).toEqual({ waiting: true });
    // The newcomer waits too: handed over to the oldest waiting message, the flag carried.
    expect(await registry.markWaiting(session)).toEqual({ turnId: turn, phase: 'handover' });
    expect(await registry.handOver(session, randomUUID(), next, false)).toBe('lost');
    expect(await registry.handOver(session, turn, next, false)).toBe('handed');
    expect(await registry.handOver(session, turn, next, false)).toBe('handed'); // sent again
    expect(await registry.get(session)).toMatchObject({ turnId: next, phase: 'queued', state: 'thinking', pending: null });
    await registry.update(session, next, { phase: 'running' });
    expect(await registry.release(session, next)).toEqual({ waiting: true });
    expect(await registry.handOver(session, next, after, true)).toBe('handed');
    expect(await registry.release(session, after)).toEqual({ waiting: true });
  });

  it('a reservation with nobody left to hand to is freed, unless a message was marked waiting since (read again)', async () => {
    const session = randomUUID();
    const turn = randomUUID();
    await registry.claim(session, turn);
    await registry.markWaiting(session);
    expect(await registry.release(session, turn)).toEqual({ waiting: true });
    expect(await registry.handOver(session, turn, null, false)).toBe('freed');
    expect(await registry.get(session)).toBeNull();
    expect(await registry.handOver(session, turn, null, false)).toBe('lost');
    await registry.claim(session, turn);
    await registry.markWaiting(session);
    await registry.release(session, turn);
    await registry.markWaiting(session); // stored after the waiting messages were read
    expect(await registry.handOver(session, turn, null, false)).toBe('again');
    expect((await registry.get(session))!.phase).toBe('handover');
    const late = randomUUID();
    expect(await registry.handOver(session, turn, late, false)).toBe('handed');
    expect(await registry.release(session, late)).toEqual({ waiting: true }); // the late message's flag was carried
  });

  it('reads many sessions at once; idle ones are absent', async () => {
    const [busy, idle] = [randomUUID(), randomUUID()];
    const turn = randomUUID();
    await registry.claim(busy, turn);
    const found = await registry.getMany([busy, idle]);
    expect([...found.keys()]).toEqual([busy]);
    expect(found.get(busy)!.turnId).toBe(turn);
    expect((await registry.getMany([])).size).toBe(0);
  });

  it('workers are alive while they beat, and gone when they leave', async () => {
    expect(await presence.alive()).toBe(0);
    await presence.beat('w1');
    await presence.beat('w2');
    await presence.beat('w1');
    expect(await presence.alive()).toBe(2);
    await presence.leave('w1');
    expect(await presence.alive()).toBe(1);
    await presence.leave('w2');
    expect(await presence.alive()).toBe(0);
  });
});

it('a worker silent past the timeout no longer counts as alive (Redis)', async () => {
  const presence = new RedisWorkerPresence(redis, `${prefix}:timeout`, { heartbeatMs: 10, timeoutMs: 50 });
  await presence.beat('quiet');
  expect(await presence.alive()).toBe(1);
  await new Promise((resolve) => setTimeout(resolve, 80));
  expect(await presence.alive()).toBe(0);
  await presence.leave('quiet');
});
