import { Redis } from 'ioredis';
import { MemoryStore, RedisStore, type RateLimitStore } from '../../src/ratelimit';
import { TEST_REDIS_URL, uniquePrefix } from '../helpers/redis';

/**
 * One contract, both stores (STYLE.md 10). Times come from the stores' own answers (nextFreeMs), not
 * from this process's clock, so the Redis store (which uses Redis's clock) is tested the same way.
 */
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Margin kept from every window edge, so scheduling jitter cannot flip a result. */
const EDGE_MARGIN_MS = 150;

const stores: [string, () => Promise<RateLimitStore>][] = [
  ['memory', async () => new MemoryStore()],
  [
    'redis',
    async () => {
      const store = new RedisStore({ url: TEST_REDIS_URL, prefix: uniquePrefix('contract') });
      expect(await store.connect()).toBe(true);
      return store;
    },
  ],
];

describe.each(stores)('%s store contract', (_name, makeStore) => {
  let store: RateLimitStore;
  beforeEach(async () => {
    store = await makeStore();
  });
  afterEach(() => store.close());

  it('lets exactly `limit` of 50 concurrent hits through', async () => {
    const results = await Promise.all(Array.from({ length: 50 }, () => store.hit('burst', 5, 60_000)));
    const allowed = results.filter((result) => result.allowed);
    expect(allowed).toHaveLength(5);
    expect(allowed.map((result) => result.remaining).sort()).toEqual([0, 1, 2, 3, 4]);
    for (const refused of results.filter((result) => !result.allowed)) {
      expect(refused).toMatchObject({ limit: 5, remaining: 0 });
      expect(refused.nextFreeMs).toBeGreaterThan(55_000);
      expect(refused.nextFreeMs).toBeLessThanOrEqual(60_000);
    }
  });

  it('keeps buckets apart', async () => {
    await Promise.all([1, 2, 3].map(() => store.hit('a', 3, 60_000)));
    expect((await store.hit('a', 3, 60_000)).allowed).toBe(false);
    expect(await store.hit('b', 3, 60_000)).toMatchObject({ allowed: true, remaining: 2 });
  });

  it('slides: a slot frees when the oldest request leaves the window, not at a window boundary', async () => {
    // Two seconds, so every step below stays hundreds of milliseconds away from a window edge.
    const windowMs = 2_000;
    // A at 0 and B at ~1000: both counted.
    const first = await store.hit('slide', 2, windowMs);
    expect(first).toMatchObject({ allowed: true, remaining: 1 });
    await sleep(windowMs / 2);
    const second = await store.hit('slide', 2, windowMs);
    expect(second).toMatchObject({ allowed: true, remaining: 0 });
    // Full: the next slot frees when A leaves the window.
    const refusedEarly = await store.hit('slide', 2, windowMs);
    expect(refusedEarly.allowed).toBe(false);
    expect(refusedEarly.nextFreeMs).toBeLessThanOrEqual(windowMs / 2 + 10);

    // Just after A left (B still ~850 ms in the window): exactly one request fits. A fixed window
    // started by A would have reset here and admitted both C and D.
    await sleep(refusedEarly.nextFreeMs + EDGE_MARGIN_MS);
    const third = await store.hit('slide', 2, windowMs);
    expect(third).toMatchObject({ allowed: true, remaining: 0 });
    const fourth = await store.hit('slide', 2, windowMs);
    expect(fourth.allowed).toBe(false);
    expect(fourth.nextFreeMs).toBeGreaterThan(0);
    expect(fourth.nextFreeMs).toBeLessThan(windowMs / 2);

    // Refused hits are not counted: once B leaves, a slot is free again.
    await sleep(fourth.nextFreeMs + EDGE_MARGIN_MS);
    expect((await store.hit('slide', 2, windowMs)).allowed).toBe(true);
  });
});

describe('memory store', () => {
  it('implements the moving window exactly (hand-moved clock)', async () => {
    let now = 900;
    const store = new MemoryStore({ now: () => now });
    const hit = () => store.hitNow('b', 2, 1_000);
    expect(hit().allowed).toBe(true); // 900
    now = 950;
    expect(hit().allowed).toBe(true); // 950
    now = 1_100; // a fixed window aligned to the second would have reset at 1000
    expect(hit()).toMatchObject({ allowed: false, nextFreeMs: 800 });
    now = 1_899;
    expect(hit().allowed).toBe(false);
    now = 1_900; // 900 leaves the window (counted while now - t < window)
    expect(hit()).toMatchObject({ allowed: true, remaining: 0, nextFreeMs: 50 });
    now = 1_949;
    expect(hit().allowed).toBe(false);
    now = 1_950;
    expect(hit().allowed).toBe(true);
    await store.close();
  });

  it('never reports more than the window to wait, whatever fractions the clock has', async () => {
    let now = 0;
    const store = new MemoryStore({ now: () => now });
    for (let step = 0; step < 1_000; step += 1) {
      now = 1_000 + step * 977.123456789; // performance.now() values are fractional
      expect(store.hitNow(`bucket-${step}`, 5, 60_000).nextFreeMs).toBe(60_000);
    }
    await store.close();
  });

  it('holds memory only for requests inside the window and clients still active', async () => {
    let now = 0;
    const store = new MemoryStore({ now: () => now, sweepIntervalMs: 60_000 });
    for (let client = 0; client < 100; client += 1) store.hitNow(`client-${client}`, 5, 1_000);
    expect(store.size).toBe(100);
    now = 500;
    store.hitNow('client-0', 5, 1_000);
    now = 1_000;
    store.sweep();
    expect(store.size).toBe(1); // only client-0 has a request (at 500) still in its window
    now = 1_500;
    store.sweep();
    expect(store.size).toBe(0);
    await store.close();
  });

  it('does not grow a bucket beyond the requests in its window', async () => {
    let now = 0;
    const store = new MemoryStore({ now: () => now });
    for (let step = 0; step < 10_000; step += 1) {
      now += 10;
      expect(store.hitNow('steady', 1_000, 1_000).allowed).toBe(true); // 100 per window, limit 1000
    }
    const bucket = (store as unknown as { buckets: Map<string, { times: number[] }> }).buckets.get('steady')!;
    expect(bucket.times.length).toBeLessThanOrEqual(200);
    await store.close();
  });
});

describe('redis store', () => {
  it('keeps its keys under <prefix>:ratelimit: with a TTL of at most the window', async () => {
    const prefix = uniquePrefix('keys');
    const store = new RedisStore({ url: TEST_REDIS_URL, prefix });
    await store.connect();
    const inspector = new Redis(TEST_REDIS_URL);
    try {
      await store.hit('default:GET /x:10.0.0.1', 5, 60_000);
      const keys = await inspector.keys(`${prefix}:*`);
      expect(keys).toEqual([`${prefix}:ratelimit:default:GET /x:10.0.0.1`]);
      const ttl = await inspector.pttl(keys[0]!);
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(60_000);
    } finally {
      inspector.disconnect();
      await store.close();
    }
  });

  it('is not reset when a new process (store) starts with the same prefix', async () => {
    const prefix = uniquePrefix('restart');
    const before = new RedisStore({ url: TEST_REDIS_URL, prefix });
    await before.connect();
    await before.hit('b', 3, 60_000);
    await before.hit('b', 3, 60_000);
    await before.close();
    const after = new RedisStore({ url: TEST_REDIS_URL, prefix });
    await after.connect();
    expect(await after.hit('b', 3, 60_000)).toMatchObject({ allowed: true, remaining: 0 });
    expect((await after.hit('b', 3, 60_000)).allowed).toBe(false);
    await after.close();
  });

  it('names its backend without the password', () => {
    const store = new RedisStore({ url: 'redis://user:hunter2@127.0.0.1:1/0', prefix: 'p' });
    expect(store.description).toBe('redis redis://user:***@127.0.0.1:1/0');
    return store.close();
  });
});
