import { DataTypes } from 'sequelize';
import type { Migration } from '../migrator';

/**
 * Where each chat channel got to on its platform (src/core/channel-cursors.ts): Mattermost keeps
 * the last post it dealt with per Mattermost channel, to catch up on posts made while the hub was
 * down (issue 31).
 */
export const channelCursors: Migration = {
  name: '0015-channel-cursors',
  up: async ({ context }) => {
    await context.createTable('channel_cursors', {
      channel: { type: DataTypes.STRING(32), primaryKey: true },
      cursor_key: { type: DataTypes.STRING(128), primaryKey: true },
      value: { type: DataTypes.STRING(512), allowNull: false },
      updated_at: { type: DataTypes.DATE, allowNull: false },
    });
  },
  down: async ({ context }) => {
    await context.dropTable('channel_cursors');
  },
};
