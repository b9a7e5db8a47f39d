import { UniqueConstraintError, type CreationAttributes, type Model, type ModelStatic, type WhereOptions } from 'sequelize';

/**
 * Finds a row by a unique key, or inserts it; `created` tells which. No transaction: the unique key
 * decides a race (the loser finds the winner's row). Sequelize's findOrCreate wraps a transaction,
 * and two of those racing on SQLite fail with SQLITE_BUSY at the lock upgrade.
 */
export async function findOrInsert<M extends Model>(model: ModelStatic<M>, where: WhereOptions<M>, values: CreationAttributes<M>): Promise<[M, boolean]> {
  const found = await model.findOne({ where });
  if (found) return [found, false];
  try {
    return [await model.create(values), true];
  } catch (error) {
    if (!(error instanceof UniqueConstraintError)) throw error;
    const winner = await model.findOne({ where });
    if (!winner) throw error;
    return [winner, false];
  }
}
