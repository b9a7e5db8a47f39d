import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { Client } from 'pg';

/** This machine's shared Redis unless SERVICE_REDIS_URL names another (other people's tests use it too). */
export const BENCH_REDIS_URL = process.env.SERVICE_REDIS_URL || 'redis://127.0.0.1:6379';
/** A PostgreSQL the bench may create throw-away databases in (trust auth here). */
export const BENCH_POSTGRES_URL = process.env.SERVICE_TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';

/** A prefix no other run uses, so the run's keys can be found and deleted afterwards. */
export function uniquePrefix(name: string): string {
  return `switchboard-bench-${name}-${randomBytes(4).toString('hex')}`;
}

/**
 * Removes every key under `prefix` (SCAN, never KEYS on a shared server; never FLUSHALL). Errors are
 * swallowed: when Redis is unreachable the run already failed and there is nothing of ours to delete.
 */
export async function deleteRedisKeys(prefix: string, redisUrl = BENCH_REDIS_URL): Promise<void> {
  const redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) await redis.unlink(...keys);
    } while (cursor !== '0');
  } catch {
    // see above
  } finally {
    redis.disconnect();
  }
}

export interface ThrowAwayDatabase {
  url: string;
  drop(): Promise<void>;
}

/** A fresh PostgreSQL database for one run; `drop()` removes it even with connections still open. */
export async function createPostgresDatabase(): Promise<ThrowAwayDatabase> {
  const name = `switchboard_bench_${randomBytes(6).toString('hex')}`;
  const admin = new Client({ connectionString: BENCH_POSTGRES_URL });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(BENCH_POSTGRES_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const client = new Client({ connectionString: BENCH_POSTGRES_URL });
      await client.connect();
      try {
        await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await client.end();
      }
    },
  };
}
