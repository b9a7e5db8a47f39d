import { Transaction, type TransactionOptions } from 'sequelize';

/**
 * Options for a write transaction. On SQLite, `BEGIN IMMEDIATE` takes the write lock up front, so
 * concurrent writers queue on the busy timeout instead of failing when a read upgrades to a write;
 * PostgreSQL ignores the type.
 */
export const WRITE_TRANSACTION: TransactionOptions = { type: Transaction.TYPES.IMMEDIATE };
