import { QueryTypes } from 'sequelize';
import { startService, type RunningService } from '../../src/main';
import { UsageService } from '../../src/usage/usage-service';
import { GENEROUS_RATE_LIMITS } from '../helpers/auth-service';
import { testEnv } from '../helpers/env';
import { LogCapture } from '../helpers/log-capture';
import { createTestPostgresDatabase } from '../helpers/postgres';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir';

/**
 * `usage_daily` kept every day for ever (issue 25). `usage.retention_days` (default 400) now keeps
 * the last days only, pruned by every API process at start and hourly, like the audit trail — on
 * both databases.
 */
const DAY_MS = 86_400_000;
const day = (daysAgo: number) => new Date(Date.now() - daysAgo * DAY_MS).toISOString().slice(0, 10);

async function startHub(dataDir: string, databaseUrl: string | null, logs: LogCapture): Promise<RunningService> {
  return startService({
    env: testEnv(dataDir, { ...GENEROUS_RATE_LIMITS, ...(databaseUrl ? { SERVICE_DATABASE_URL: databaseUrl } : {}) }),
    cwd: makeTempDir(),
    logDestination: logs,
  });
}

async function days(service: RunningService): Promise<string[]> {
  const rows = await service.storage.sequelize.query<{ day: string }>('SELECT day FROM usage_daily ORDER BY day', { type: QueryTypes.SELECT });
  return rows.map((row) => row.day);
}

/** Waits for a log line (the prune runs in the background once the hub is up). */
async function logged(logs: LogCapture, message: string): Promise<Record<string, unknown>> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const found = logs.entries().find((entry) => entry.msg === message);
    if (found) return found;
    if (Date.now() > deadline) throw new Error(`no log line "${message}"`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

afterAll(() => removeTempDirs());

interface TestDatabase {
  /** null: SQLite in the hub's data dir. */
  url: string | null;
  drop(): Promise<void>;
}

const databases: [string, () => Promise<TestDatabase>][] = [
  ['SQLite', async () => ({ url: null, drop: async () => undefined })],
  ['PostgreSQL', async () => createTestPostgresDatabase()],
];

describe.each(databases)('usage retention on %s', (_name, database) => {
  it('a hub deletes the usage days past usage.retention_days (default 400) when it starts', async () => {
    const db = await database();
    const dataDir = makeTempDir();
    try {
      // A hub that ran for a long time: days of usage from 500 days ago to today.
      const first = await startHub(dataDir, db.url, new LogCapture());
      const kept = [day(399), day(1), day(0)];
      for (const at of [day(500), day(401), ...kept]) {
        await first.storage.sequelize.query(
          "INSERT INTO usage_daily (day, user_key, workflow_id, channel, input_tokens, output_tokens, turns) VALUES (:at, 'u1', '', 'web', 5, 7, 1)",
          { replacements: { at } },
        );
      }
      await first.stop();

      const logs = new LogCapture();
      const second = await startHub(dataDir, db.url, logs);
      try {
        expect(await logged(logs, 'old usage rows deleted')).toMatchObject({ deleted: 2, retention_days: 400 });
        expect(await days(second)).toEqual([...kept].sort());
        // The service's own rule: 0 keeps everything; a day is kept whole while part of it is in the window.
        const usage = new UsageService(second.storage.sequelize);
        expect(await usage.prune(0)).toBe(0);
        // Tomorrow, one day kept: the days before today go (day 399 and yesterday), today stays.
        expect(await usage.prune(1, new Date(Date.now() + DAY_MS))).toBe(2);
        expect(await days(second)).toEqual([day(0)]);
      } finally {
        await second.stop();
      }
    } finally {
      await db.drop();
    }
  }, 60_000);
});
