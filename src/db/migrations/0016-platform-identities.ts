import { DataTypes } from 'sequelize';
import type { Migration } from '../migrator';

/**
 * Platform identities (issue 30): a chat platform's user id (a Slack `U…`, a Telegram user id, a
 * Mattermost user id) bound to a hub user, so that an approval policy's `users:` and `roles:` count
 * that person's clicks in the chat. One hub user per platform id (the primary key); set by admins.
 */
export const platformIdentities: Migration = {
  name: '0016-platform-identities',
  up: async ({ context }) => {
    await context.createTable('platform_identities', {
      channel: { type: DataTypes.STRING(32), primaryKey: true },
      platform_user_id: { type: DataTypes.STRING(128), primaryKey: true },
      user_id: { type: DataTypes.UUID, allowNull: false },
      created_by: { type: DataTypes.UUID, allowNull: true },
      created_at: { type: DataTypes.DATE, allowNull: false },
    });
    await context.addIndex('platform_identities', ['user_id']);
  },
  down: async ({ context }) => {
    await context.dropTable('platform_identities');
  },
};
