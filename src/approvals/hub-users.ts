import { QueryTypes, type Sequelize } from 'sequelize';
import type { HubUserFacts, HubUserLookup } from './approvers';

/**
 * A hub user's name, role and whether they are active, read when their click arrives (a role taken
 * away a moment ago counts at once): one indexed read, in any process (the worker does not define the
 * auth models).
 */
export function hubUserLookup(sequelize: Sequelize): HubUserLookup {
  return async (userId: string): Promise<HubUserFacts | null> => {
    const [row] = await sequelize.query<{ username: string; role: string; is_active: boolean | number }>(
      'SELECT username, role, is_active FROM users WHERE id = :id',
      { type: QueryTypes.SELECT, replacements: { id: userId } },
    );
    return row ? { username: row.username, role: row.role, isActive: Boolean(row.is_active) } : null;
  };
}
