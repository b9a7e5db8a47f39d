import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';

/** The Redis the suite runs against (this machine: 127.0.0.1:6379; CI starts it). */
export const TEST_REDIS_URL = process.env.SERVICE_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** A key prefix no other test uses, so tests share one Redis without seeing each other. */
export function uniquePrefix(label = 'test'): string {
  return `sbtest:${label}:${randomBytes(4).toString('hex')}`;
}

/** Deletes every key under `prefix` (best effort; keys also expire or are tiny). */
export async function deleteKeys(prefix: string): Promise<void> {
  const redis = new Redis(TEST_REDIS_URL);
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
      cursor = next;
      if (keys.length > 0) await redis.del(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}
