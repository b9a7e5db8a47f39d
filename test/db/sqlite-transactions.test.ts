import { DataTypes } from 'sequelize';
import { openDatabase, type Database } from '../../src/db/database';
import { createLogger } from '../../src/logs/logger';
import { LogCapture } from '../helpers/log-capture';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir';

const logger = createLogger({ level: 'warn', format: 'json', name: 'test', destination: new LogCapture() });

/**
 * Concurrent SQLite transactions (two messages accepted at once) used to wait for the write lock
 * inside libuv's threads and fail with SQLITE_BUSY after the busy timeout; queued, they all commit.
 */
describe('SQLite transactions', () => {
  let database: Database;

  beforeAll(async () => {
    database = await openDatabase({ data_dir: makeTempDir(), database: { url: null, pool_max: 1 } }, logger);
    await database.sequelize.getQueryInterface().createTable('counters', {
      id: { type: DataTypes.INTEGER, primaryKey: true },
      value: { type: DataTypes.INTEGER, allowNull: false },
    });
    await database.sequelize.query('INSERT INTO counters (id, value) VALUES (1, 0)');
  });

  afterAll(async () => {
    await database.close();
    removeTempDirs();
  });

  it('commits many concurrent read-then-write transactions, none lost', async () => {
    const sequelize = database.sequelize;
    const increments = Array.from({ length: 40 }, () =>
      sequelize.transaction(async (transaction) => {
        const [rows] = await sequelize.query('SELECT value FROM counters WHERE id = 1', { transaction });
        const value = (rows as { value: number }[])[0]!.value;
        await sequelize.query('UPDATE counters SET value = :value WHERE id = 1', { replacements: { value: value + 1 }, transaction });
      }),
    );
    // Writes on the default connection meanwhile must not break a transaction's read-then-write.
    const others = Array.from({ length: 40 }, () => sequelize.query('UPDATE counters SET value = value WHERE id = 1'));
    await Promise.all([...increments, ...others]);
    const [rows] = await sequelize.query('SELECT value FROM counters WHERE id = 1');
    expect((rows as { value: number }[])[0]!.value).toBe(40);
  });

  it('still rolls a failed transaction back and lets the next one run', async () => {
    const sequelize = database.sequelize;
    await expect(
      sequelize.transaction(async (transaction) => {
        await sequelize.query('UPDATE counters SET value = -1 WHERE id = 1', { transaction });
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    await sequelize.transaction(async (transaction) => sequelize.query('UPDATE counters SET value = value + 1 WHERE id = 1', { transaction }));
    const [rows] = await sequelize.query('SELECT value FROM counters WHERE id = 1');
    expect((rows as { value: number }[])[0]!.value).toBe(41);
  });
});
