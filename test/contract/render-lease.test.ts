import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import type { RenderLeases } from '../../src/core/render-lease';
import { InProcessRenderLeases } from '../../src/events/in-process-render-leases';
import { RedisRenderLeases } from '../../src/events/redis-render-leases';
import { TEST_REDIS_URL, deleteKeys, uniquePrefix } from '../helpers/redis';

/**
 * The chat rendering lease (src/core/render-lease.ts), one contract on both drivers: the in-process
 * one (one API process) and the Redis one (two processes: two connections here). Short limits, so
 * the waits are counted in tens of milliseconds.
 */
const LIMITS = { maxWaitMs: 400, ttlMs: 300, renewMs: 100, pollMs: 10 };
/**
 * For the tests of who goes next: a waiter that ran out of patience would go ahead out of turn, so
 * a machine stalled for a few hundred milliseconds (a loaded CI run) must not let one.
 */
const PATIENT = { ...LIMITS, maxWaitMs: 30_000 };

interface Leases {
  /** Two API processes' views (the same object in-process). */
  a: RenderLeases;
  b: RenderLeases;
  /** A process that dies holding a lease: its key stays until it expires (Redis only). */
  die?: (chat: string) => Promise<void>;
  close(): Promise<void>;
}

function inProcess(limits: typeof LIMITS): Leases {
  const leases = new InProcessRenderLeases(limits);
  return { a: leases, b: leases, close: async () => undefined };
}

function redis(limits: typeof LIMITS): Leases {
  const prefix = uniquePrefix('lease');
  const connections = [new Redis(TEST_REDIS_URL), new Redis(TEST_REDIS_URL)];
  return {
    a: new RedisRenderLeases(connections[0]!, prefix, limits),
    b: new RedisRenderLeases(connections[1]!, prefix, limits),
    // A dead process: its key is set as a holder would set it, and never renewed nor deleted.
    die: async (chat) => void (await connections[0]!.set(`${prefix}:render-lease:${chat}`, 'dead', 'PX', limits.ttlMs)),
    close: async () => {
      for (const connection of connections) connection.disconnect();
      await deleteKeys(prefix);
    },
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.each([
  ['in-process', inProcess],
  ['redis', redis],
])('render lease contract: %s', (_name, make) => {
  let leases: Leases;
  /** Made only by the tests that use them (the Redis ones open connections of their own). */
  let patientLeases: Leases | null = null;
  const patient = () => (patientLeases ??= make(PATIENT));

  beforeEach(() => {
    leases = make(LIMITS);
  });

  afterEach(async () => {
    await Promise.all([leases.close(), patientLeases?.close()]);
    patientLeases = null;
  });

  it('makes the next turn wait for the previous turn to release the chat', async () => {
    const chat = randomUUID();
    const order: string[] = [];
    const { a, b } = patient();
    const first = await a.acquire(chat, 'turn-1', 10);
    expect(first.waitedOut).toBe(false);
    const second = b.acquire(chat, 'turn-2', 20).then((held) => {
      order.push('turn-2 sends');
      return held;
    });
    await sleep(60);
    order.push('turn-1 last send');
    await first.release();
    const held = await second;
    expect(held.waitedOut).toBe(false);
    expect(order).toEqual(['turn-1 last send', 'turn-2 sends']);
    await held.release();
  });

  it('hands the lease to the next turn in the chat (lowest ticket), whichever process asked first', async () => {
    const chat = randomUUID();
    const order: string[] = [];
    const { a, b } = patient();
    const first = await a.acquire(chat, 'turn-1', 1);
    // Turn 3's process asks before turn 2's (turn 2 finished while turn 1 still sent its answer).
    const third = a.acquire(chat, 'turn-3', 30).then(async (held) => {
      order.push('turn-3');
      await held.release();
    });
    await sleep(30);
    const second = b.acquire(chat, 'turn-2', 20).then(async (held) => {
      order.push('turn-2');
      await sleep(30);
      await held.release();
    });
    await sleep(30);
    await first.release();
    await Promise.all([second, third]);
    expect(order).toEqual(['turn-2', 'turn-3']);
  });

  it('keeps chats apart: another chat never waits', async () => {
    const held = await leases.a.acquire(randomUUID(), 'turn-1', 1);
    const started = Date.now();
    const other = await leases.b.acquire(randomUUID(), 'turn-9', 1);
    expect(other.waitedOut).toBe(false);
    expect(Date.now() - started).toBeLessThan(LIMITS.maxWaitMs);
    await Promise.all([held.release(), other.release()]);
  });

  it('stays held past its time to live while its holder lives (a long turn)', async () => {
    const chat = randomUUID();
    const held = await leases.a.acquire(chat, 'turn-1', 30);
    await sleep(LIMITS.ttlMs * 2);
    const next = await leases.b.acquire(chat, 'turn-2', 40);
    // Still held: the wait ran out rather than the lease being taken.
    expect(next.waitedOut).toBe(true);
    await held.release();
    const after = await leases.b.acquire(chat, 'turn-3', 50);
    expect(after.waitedOut).toBe(false);
    await after.release();
  });

  it('caps the wait: a turn goes ahead after maxWaitMs', async () => {
    const chat = randomUUID();
    const held = await leases.a.acquire(chat, 'turn-1', 60);
    const started = Date.now();
    const next = await leases.b.acquire(chat, 'turn-2', 70);
    expect(next.waitedOut).toBe(true);
    expect(Date.now() - started).toBeGreaterThanOrEqual(LIMITS.maxWaitMs - 20);
    await held.release();
  });

  it('releases once: a second release does not free a lease the next turn holds', async () => {
    const chat = randomUUID();
    const first = await leases.a.acquire(chat, 'turn-1', 80);
    await first.release();
    const second = await leases.b.acquire(chat, 'turn-2', 90);
    await first.release();
    const third = await leases.a.acquire(chat, 'turn-3', 100);
    expect(third.waitedOut).toBe(true);
    await second.release();
  });

  it('frees the chat by itself when the holding process died (Redis: the key expires)', async () => {
    if (!leases.die) return; // in-process: a process that dies takes its leases with it
    const chat = randomUUID();
    await leases.die(chat);
    const started = Date.now();
    const next = await leases.b.acquire(chat, 'turn-2', 110);
    expect(next.waitedOut).toBe(false);
    expect(Date.now() - started).toBeLessThan(LIMITS.maxWaitMs);
    await next.release();
  });
});
