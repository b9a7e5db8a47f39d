import type { Config } from '../config';
import type { Database } from './database';
import { SqliteTurnStore } from './sqlite/sqlite-turn-store';
import type { TurnStore } from './turn-store';

/** The hot-path store over the same (migrated) database: SQLite file or PostgreSQL URL. */
export async function openTurnStore(database: Database, config: Pick<Config, 'database'>): Promise<TurnStore> {
  if (database.dialect === 'postgres') {
    // pg is loaded only for PostgreSQL: an embedded hub never needs it.
    const { PostgresTurnStore } = require('./postgres/postgres-turn-store') as typeof import('./postgres/postgres-turn-store');
    return new PostgresTurnStore(config.database.url!, config.database.pool_max);
  }
  if (!database.file) throw new Error('the SQLite database has no file to open the turn store on');
  return SqliteTurnStore.open(database.file);
}
