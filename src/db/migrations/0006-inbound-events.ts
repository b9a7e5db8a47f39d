import { DataTypes } from 'sequelize';
import type { Migration } from '../migrator';

/**
 * Platform event ids already taken in (Slack event_id, Telegram update_id): a platform's retry of the
 * same event is recognised and makes no second turn.
 */
export const inboundEvents: Migration = {
  name: '0006-inbound-events',
  up: async ({ context }) => {
    await context.createTable('inbound_events', {
      channel: { type: DataTypes.STRING(32), primaryKey: true },
      external_id: { type: DataTypes.STRING(128), primaryKey: true },
      session_id: { type: DataTypes.UUID, allowNull: true },
      message_id: { type: DataTypes.UUID, allowNull: true },
      created_at: { type: DataTypes.DATE, allowNull: false },
    });
  },
  down: async ({ context }) => {
    await context.dropTable('inbound_events');
  },
};
