import { randomBytes } from 'node:crypto';
import { Client } from 'pg';

/**
 * The PostgreSQL the suite runs against (this machine: 127.0.0.1:5432, trust auth, database `test`).
 * Each caller gets its own throw-away database, so test files never see each other's tables.
 */
export const TEST_POSTGRES_URL = process.env.SERVICE_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

export interface TestPostgresDatabase {
  url: string;
  drop(): Promise<void>;
}

export async function createTestPostgresDatabase(): Promise<TestPostgresDatabase> {
  const name = `switchboard_test_${randomBytes(6).toString('hex')}`;
  const admin = new Client({ connectionString: TEST_POSTGRES_URL });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(TEST_POSTGRES_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const client = new Client({ connectionString: TEST_POSTGRES_URL });
      await client.connect();
      try {
        await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await client.end();
      }
    },
  };
}
