import { DataTypes } from 'sequelize';
import type { Migration } from '../migrator';

/**
 * Events in, answers out (issue 29): a workflow's webhooks and schedules (`workflows.events`), every
 * delivery of one (received → verified → turn → delivered or failed), the chat thread each thread key
 * posted into, session keys that continue an event's conversation (a person's reply in its thread),
 * and each schedule's state (paused, last fire and outcome).
 */
export const workflowEvents: Migration = {
  name: '0013-workflow-events',
  up: async ({ context }) => {
    await context.addColumn('workflows', 'events', { type: DataTypes.JSON, allowNull: true });
    await context.createTable('event_deliveries', {
      id: { type: DataTypes.UUID, primaryKey: true },
      workflow: { type: DataTypes.STRING(64), allowNull: false },
      source: { type: DataTypes.STRING(16), allowNull: false },
      name: { type: DataTypes.STRING(64), allowNull: false },
      external_id: { type: DataTypes.STRING(200), allowNull: false },
      body_hash: { type: DataTypes.STRING(64), allowNull: true },
      payload: { type: DataTypes.TEXT, allowNull: true },
      thread_key: { type: DataTypes.STRING(128), allowNull: true },
      deliver: { type: DataTypes.STRING(100), allowNull: false },
      status: { type: DataTypes.STRING(16), allowNull: false },
      session_id: { type: DataTypes.UUID, allowNull: true },
      turn_id: { type: DataTypes.UUID, allowNull: true },
      platform_message_id: { type: DataTypes.STRING(100), allowNull: true },
      attempts: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
      reason: { type: DataTypes.STRING(500), allowNull: true },
      created_at: { type: DataTypes.DATE, allowNull: false },
      updated_at: { type: DataTypes.DATE, allowNull: false },
    });
    await context.addIndex('event_deliveries', ['workflow', 'source', 'name', 'external_id'], { unique: true, name: 'event_deliveries_once' });
    await context.addIndex('event_deliveries', ['created_at'], { name: 'event_deliveries_created' });
    await context.createTable('event_threads', {
      session_key: { type: DataTypes.STRING(255), primaryKey: true },
      deliver: { type: DataTypes.STRING(100), primaryKey: true },
      root_message_id: { type: DataTypes.STRING(100), allowNull: false },
      created_at: { type: DataTypes.DATE, allowNull: false },
    });
    await context.createTable('session_aliases', {
      session_key: { type: DataTypes.STRING(255), primaryKey: true },
      session_id: { type: DataTypes.UUID, allowNull: false },
      created_at: { type: DataTypes.DATE, allowNull: false },
    });
    await context.createTable('event_schedules', {
      workflow: { type: DataTypes.STRING(64), primaryKey: true },
      name: { type: DataTypes.STRING(64), primaryKey: true },
      paused: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
      last_fire_at: { type: DataTypes.DATE, allowNull: true },
      last_outcome: { type: DataTypes.STRING(16), allowNull: true },
      last_delivery_id: { type: DataTypes.UUID, allowNull: true },
      updated_at: { type: DataTypes.DATE, allowNull: false },
    });
  },
  down: async ({ context }) => {
    await context.dropTable('event_schedules');
    await context.dropTable('session_aliases');
    await context.dropTable('event_threads');
    await context.dropTable('event_deliveries');
    await context.removeColumn('workflows', 'events');
  },
};
