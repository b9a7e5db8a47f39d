import { Transaction, type Sequelize } from 'sequelize';

/**
 * Runs a group of writes atomically where that is safe, and returns what `work` returns.
 *
 * PostgreSQL: one transaction. SQLite: no transaction. Sequelize gives every SQLite transaction a
 * connection of its own, and a connection waiting for the write lock blocks a libuv worker thread
 * for up to the busy timeout; with a few concurrent writers (plus argon2 hashing on the same pool)
 * the lock holder then cannot get a thread to finish: a stall of seconds. Without a transaction every
 * statement runs on Sequelize's one default connection, one after another, each atomic, and SQLite is
 * single-process by design (docs/decisions.md, Storage). Callers are written so that each statement
 * is safe on its own (conditional UPDATEs, INSERT … ON CONFLICT DO NOTHING).
 */
export async function writeAtomically<T>(sequelize: Sequelize, work: (transaction: Transaction | undefined) => Promise<T>): Promise<T> {
  if (sequelize.getDialect() !== 'postgres') return work(undefined);
  return sequelize.transaction((transaction) => work(transaction));
}
