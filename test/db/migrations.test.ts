import path from 'node:path';
import { DataTypes, QueryTypes } from 'sequelize';
import { openDatabase, type Database } from '../../src/db/database';
import { createMigrator, migrateToLatest, type Migration } from '../../src/db/migrator';
import { MIGRATIONS } from '../../src/db/migrations';
import { createLogger } from '../../src/logs/logger';
import { LogCapture } from '../helpers/log-capture';
import { createTestPostgresDatabase, type TestPostgresDatabase } from '../helpers/postgres';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir';

const logger = createLogger({ level: 'warn', format: 'json', name: 'test', destination: new LogCapture() });

/** Two extra migrations on top of the real ones, to prove ordering, idempotence and rollback. */
const FIXTURES: Migration[] = [
  {
    name: '9001-fixture-widgets',
    up: async ({ context }) => {
      await context.createTable('fixture_widgets', {
        id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
        name: { type: DataTypes.STRING(64), allowNull: false },
      });
    },
    down: async ({ context }) => context.dropTable('fixture_widgets'),
  },
  {
    name: '9002-fixture-widget-color',
    up: async ({ context }) => context.addColumn('fixture_widgets', 'color', { type: DataTypes.STRING(16), allowNull: true }),
    down: async ({ context }) => context.removeColumn('fixture_widgets', 'color'),
  },
];
const ALL = [...MIGRATIONS, ...FIXTURES];

async function tableColumns(database: Database, table: string): Promise<string[]> {
  try {
    return Object.keys(await database.sequelize.getQueryInterface().describeTable(table)).sort();
  } catch {
    return [];
  }
}

const backends: [string, () => Promise<{ open: () => Promise<Database>; cleanup: () => Promise<void> }>][] = [
  [
    'SQLite',
    async () => {
      const dataDir = makeTempDir();
      return {
        open: () => openDatabase({ data_dir: dataDir, database: { url: null, pool_max: 1 } }, logger),
        cleanup: async () => undefined,
      };
    },
  ],
  [
    'PostgreSQL',
    async () => {
      const pg: TestPostgresDatabase = await createTestPostgresDatabase();
      return {
        open: () => openDatabase({ data_dir: makeTempDir(), database: { url: pg.url, pool_max: 5 } }, logger),
        cleanup: () => pg.drop(),
      };
    },
  ],
];

afterAll(removeTempDirs);

describe.each(backends)('migrations on %s', (_name, setup) => {
  let backend: Awaited<ReturnType<(typeof backends)[number][1]>>;
  let database: Database;

  beforeAll(async () => {
    backend = await setup();
    database = await backend.open();
  });

  afterAll(async () => {
    await database.close();
    await backend.cleanup();
  });

  it('applies every pending migration in order, then finds nothing to do', async () => {
    const applied = await migrateToLatest(database, logger, ALL);
    expect(applied).toEqual(ALL.map((m) => m.name));
    expect(await tableColumns(database, 'fixture_widgets')).toEqual(['color', 'id', 'name']);
    expect(await migrateToLatest(database, logger, ALL)).toEqual([]);
    const executed = await createMigrator(database, ALL).executed();
    expect(executed.map((m) => m.name)).toEqual(ALL.map((m) => m.name));
  });

  it('rolls the fixtures back and forward again', async () => {
    const migrator = createMigrator(database, ALL);
    await migrator.down({ to: FIXTURES[0]!.name });
    expect(await tableColumns(database, 'fixture_widgets')).toEqual([]);
    expect(await migrateToLatest(database, logger, ALL)).toEqual(FIXTURES.map((m) => m.name));
  });

  it('keeps what was written across a reopen (a real file or server, not memory)', async () => {
    await database.sequelize.query("INSERT INTO fixture_widgets (name, color) VALUES ('gear', 'red')");
    await database.close();
    database = await backend.open();
    expect(await migrateToLatest(database, logger, ALL)).toEqual([]);
    const [rows] = await database.sequelize.query('SELECT name, color FROM fixture_widgets');
    expect(rows).toEqual([{ name: 'gear', color: 'red' }]);
  });
});

describe('concurrent migrators on PostgreSQL', () => {
  it('take turns: each migration runs exactly once', async () => {
    const pg = await createTestPostgresDatabase();
    const databases = await Promise.all([1, 2, 3].map(() => openDatabase({ data_dir: makeTempDir(), database: { url: pg.url, pool_max: 3 } }, logger)));
    try {
      const results = await Promise.all(databases.map((database) => migrateToLatest(database, logger, ALL)));
      expect(results.flat().sort()).toEqual(ALL.map((m) => m.name).sort());
    } finally {
      await Promise.all(databases.map((database) => database.close()));
      await pg.drop();
    }
  });
});

describe('the SQLite default', () => {
  it('lives in <data_dir>/switchboard.sqlite with WAL and foreign keys on', async () => {
    const dataDir = makeTempDir();
    const database = await openDatabase({ data_dir: dataDir, database: { url: null, pool_max: 1 } }, logger);
    try {
      expect(database.description).toBe(`SQLite ${path.join(dataDir, 'switchboard.sqlite')}`);
      const select = { type: QueryTypes.SELECT } as const;
      expect(await database.sequelize.query('PRAGMA journal_mode', select)).toEqual([{ journal_mode: 'wal' }]);
      expect(await database.sequelize.query('PRAGMA foreign_keys', select)).toEqual([{ foreign_keys: 1 }]);
      // Transactions run on connections of their own: they must wait for a lock, not fail at once.
      await database.sequelize.transaction(async (transaction) => {
        expect(await database.sequelize.query('PRAGMA busy_timeout', { ...select, transaction })).toEqual([{ timeout: 5000 }]);
        expect(await database.sequelize.query('PRAGMA foreign_keys', { ...select, transaction })).toEqual([{ foreign_keys: 1 }]);
      });
    } finally {
      await database.close();
    }
  });
});
