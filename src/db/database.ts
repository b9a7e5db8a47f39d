import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { Sequelize, Transaction } from 'sequelize';
import type { Config } from '../config';
import { redactUrlCredentials } from '../logs/redact';
import type { Logger } from '../logs/logger';

export const SQLITE_FILE_NAME = 'switchboard.sqlite';
/** How long an SQLite writer waits for a lock held by another connection before failing. */
export const SQLITE_BUSY_TIMEOUT_MS = 5_000;

export interface Database {
  sequelize: Sequelize;
  dialect: 'sqlite' | 'postgres';
  /** Where the data lives, safe to print (password redacted). */
  description: string;
  /** The SQLite file (SQLite only): the turn store opens its own connections to it. */
  file?: string;
  close(): Promise<void>;
}

/**
 * Opens the database: PostgreSQL when `database.url` is set, else an SQLite file in the data dir.
 * SQLite is for one process (the embedded default); scale-out needs PostgreSQL.
 */
export async function openDatabase(config: Pick<Config, 'database' | 'data_dir'>, logger: Logger): Promise<Database> {
  const logging = logger.isLevelEnabled('trace') ? (sql: string) => logger.trace({ sql }, 'sql') : false;
  if (config.database.url) {
    const sequelize = new Sequelize(config.database.url, {
      dialect: 'postgres',
      logging,
      pool: { max: config.database.pool_max, min: 0, idle: 10_000 },
    });
    await sequelize.authenticate();
    return wrap(sequelize, 'postgres', `PostgreSQL ${redactUrlCredentials(config.database.url)}`);
  }
  const dataDir = path.resolve(config.data_dir);
  mkdirSync(dataDir, { recursive: true });
  const storage = path.join(dataDir, SQLITE_FILE_NAME);
  const sequelize = new Sequelize({ dialect: 'sqlite', storage, logging });
  configureConnections(sequelize);
  takeTurnsWithTransactions(sequelize);
  // WAL (a property of the file) lets readers run beside the writer. Sequelize itself turns
  // foreign keys on for every connection it opens.
  await sequelize.query('PRAGMA journal_mode = WAL;');
  return { ...wrap(sequelize, 'sqlite', `SQLite ${storage}`), file: storage };
}

interface SqliteConnection {
  configure(option: 'busyTimeout', milliseconds: number): void;
  run(sql: string): void;
}

/**
 * Sequelize opens one SQLite connection per transaction, and SQLite fails a second writer at once
 * (SQLITE_BUSY) unless the connection has a busy timeout. Sequelize has no option for it, so every
 * connection it hands out gets one here (and synchronous=NORMAL).
 */
function configureConnections(sequelize: Sequelize): void {
  const manager = sequelize.connectionManager as unknown as { getConnection(options?: unknown): Promise<SqliteConnection> };
  const getConnection = manager.getConnection.bind(manager);
  const configured = new WeakSet<SqliteConnection>();
  manager.getConnection = async (options) => {
    const connection = await getConnection(options);
    if (!configured.has(connection)) {
      connection.configure('busyTimeout', SQLITE_BUSY_TIMEOUT_MS);
      // With WAL, NORMAL syncs at checkpoints rather than every commit (SQLite's documented trade:
      // a power cut may lose the newest commits, never corrupt the file). A per-connection setting.
      connection.run('PRAGMA synchronous = NORMAL');
      configured.add(connection);
    }
    return connection;
  };
}

type ManagedTransaction = (options: { type?: Transaction.TYPES }, work: (transaction: Transaction) => Promise<unknown>) => Promise<unknown>;

/**
 * Runs this process's SQLite transactions one at a time, each `BEGIN IMMEDIATE`. Sequelize gives every
 * SQLite transaction a connection of its own; concurrent ones (two messages accepted at once) then
 * wait for the write lock inside libuv's worker threads, so the lock holder can get no thread for
 * its next statement: every request stalled for the busy timeout and half failed (measured by
 * `npm run bench -- ingest`: 200 concurrent posts took 51 s, 100 answered 500). Queued here, a
 * transaction waits on a promise instead; IMMEDIATE takes the write lock at BEGIN, so a transaction
 * that reads first cannot fail to upgrade after a write on the default connection. SQLite serves one
 * process (decisions.md, Storage), so an in-process queue covers every writer's transactions.
 * Unmanaged transactions (no callback) are not used by this project and pass through unqueued.
 */
function takeTurnsWithTransactions(sequelize: Sequelize): void {
  const transaction = sequelize.transaction.bind(sequelize) as unknown as ManagedTransaction & ((options?: object) => Promise<Transaction>);
  reuseOneTransactionConnection(sequelize);
  let tail: Promise<unknown> = Promise.resolve();
  const queued = (first?: unknown, second?: unknown): Promise<unknown> => {
    const [options, work] = typeof first === 'function' ? [{}, first] : [(first ?? {}) as object, second];
    if (typeof work !== 'function') return transaction(options);
    const run = tail.then(() => transaction({ type: Transaction.TYPES.IMMEDIATE, ...options }, work as (t: Transaction) => Promise<unknown>));
    tail = run.catch(() => undefined);
    return run;
  };
  (sequelize as unknown as { transaction: typeof queued }).transaction = queued;
}

interface ConnectionManager {
  connections: Record<string, unknown>;
  getConnection(options?: { uuid?: string }): Promise<unknown>;
  releaseConnection(connection: unknown, force?: boolean): unknown;
}

/**
 * Sequelize opens and closes a new SQLite connection for every transaction (about 4 ms of the 5 ms a
 * one-statement transaction took here). Transactions run one at a time (above), so they can all use
 * one long-lived connection; the default connection still serves statements outside transactions.
 */
function reuseOneTransactionConnection(sequelize: Sequelize): void {
  const manager = sequelize.connectionManager as unknown as ConnectionManager;
  const getConnection = manager.getConnection.bind(manager);
  const releaseConnection = manager.releaseConnection.bind(manager);
  let shared: unknown = null;
  manager.getConnection = async (options) => {
    if (!options?.uuid || options.uuid === 'default') return getConnection(options);
    shared ??= await getConnection({ ...options, uuid: 'transactions' });
    return shared;
  };
  manager.releaseConnection = (connection, force) => {
    if (connection !== shared) return releaseConnection(connection, force);
    if (!force) return undefined;
    // A failed commit leaves the connection in an unknown state; Sequelize closes it. Forget it so
    // the next transaction opens a fresh one (it is cached under the key we asked for).
    shared = null;
    delete manager.connections.transactions;
    return releaseConnection(connection, force);
  };
}

function wrap(sequelize: Sequelize, dialect: Database['dialect'], description: string): Database {
  return { sequelize, dialect, description, close: () => sequelize.close() };
}
