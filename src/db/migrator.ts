import type { QueryInterface } from 'sequelize';
import { SequelizeStorage, Umzug, type MigrationFn } from 'umzug';
import type { Logger } from '../logs/logger';
import type { Database } from './database';
import { MIGRATIONS } from './migrations';

export interface Migration {
  /** Sortable, never renamed once released: `0001-users`. */
  name: string;
  up: MigrationFn<QueryInterface>;
  down: MigrationFn<QueryInterface>;
}

/** Any fixed 64-bit number: the PostgreSQL advisory lock that serialises concurrent migrators. */
const MIGRATION_LOCK_ID = 7_420_211_337;

export function createMigrator(database: Database, migrations: readonly Migration[] = MIGRATIONS, logger?: Logger) {
  return new Umzug({
    migrations: migrations.map((m) => ({ name: m.name, up: m.up, down: m.down })),
    context: database.sequelize.getQueryInterface(),
    storage: new SequelizeStorage({ sequelize: database.sequelize, tableName: 'schema_migrations' }),
    logger: logger
      ? {
          // umzug's events carry `name`, which is pino's process name: logged as `migration` instead.
          info: (event) => logger.info(migrationFields(event), 'migration'),
          warn: (event) => logger.warn(migrationFields(event), 'migration'),
          error: (event) => logger.error(migrationFields(event), 'migration'),
          debug: (event) => logger.debug(migrationFields(event), 'migration'),
        }
      : undefined,
  });
}

/**
 * Applies every pending migration. On PostgreSQL an advisory lock makes processes that start together
 * (API replicas, workers) take turns; the later ones find nothing left to do.
 */
export async function migrateToLatest(database: Database, logger?: Logger, migrations: readonly Migration[] = MIGRATIONS): Promise<string[]> {
  const migrator = createMigrator(database, migrations, logger);
  if (database.dialect !== 'postgres') return (await migrator.up()).map((m) => m.name);
  // Session-level advisory locks belong to one connection: hold one connection for lock and unlock.
  return database.sequelize.transaction(async (transaction) => {
    await database.sequelize.query('SELECT pg_advisory_xact_lock(:id)', { replacements: { id: MIGRATION_LOCK_ID }, transaction });
    return (await migrator.up()).map((m) => m.name);
  });
}

function migrationFields(event: Record<string, unknown>): Record<string, unknown> {
  const { name, ...rest } = event;
  return name === undefined ? rest : { ...rest, migration: name };
}
