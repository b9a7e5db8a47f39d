import { QueryTypes, type Sequelize } from 'sequelize';

/**
 * The username of a user id, or null (a chat contact's `<channel>:<contact>`, an unknown id, or a
 * failed read). What daily budgets need to find `usage.budgets.users.<name>`: one indexed read, in
 * the worker too, where the auth models are not defined.
 */
export async function usernameOf(sequelize: Sequelize, userId: string): Promise<string | null> {
  const [row] = await sequelize
    .query<{ username: string }>('SELECT username FROM users WHERE id = :id', { type: QueryTypes.SELECT, replacements: { id: userId } })
    .catch(() => []);
  return row?.username ?? null;
}
