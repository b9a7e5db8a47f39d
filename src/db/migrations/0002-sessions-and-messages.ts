import { DataTypes } from 'sequelize';
import type { Migration } from '../migrator';

/**
 * Sessions and their messages. Rows have an integer `ordinal` primary key (a stable order and cursor
 * even for rows written in the same millisecond) and a public UUID `id`.
 */
export const sessionsAndMessages: Migration = {
  name: '0002-sessions-and-messages',
  up: async ({ context }) => {
    await context.createTable('sessions', {
      ordinal: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
      id: { type: DataTypes.UUID, allowNull: false, unique: true },
      name: { type: DataTypes.STRING(200), allowNull: false },
      owner_id: { type: DataTypes.STRING(64), allowNull: false },
      channel: { type: DataTypes.STRING(32), allowNull: false },
      session_key: { type: DataTypes.STRING(255), allowNull: true, unique: true },
      state: { type: DataTypes.STRING(32), allowNull: false, defaultValue: 'idle' },
      active_workflow_id: { type: DataTypes.STRING(64), allowNull: true },
      config: { type: DataTypes.JSON, allowNull: false },
      active_tools: { type: DataTypes.JSON, allowNull: false },
      input_tokens: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
      output_tokens: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
      // The running turn (its user message id) and whether a worker has started it.
      current_turn_id: { type: DataTypes.UUID, allowNull: true },
      turn_phase: { type: DataTypes.STRING(16), allowNull: true },
      archived_at: { type: DataTypes.DATE, allowNull: true },
      created_at: { type: DataTypes.DATE, allowNull: false },
      updated_at: { type: DataTypes.DATE, allowNull: false },
    });
    await context.addIndex('sessions', ['owner_id', 'ordinal']);
    await context.addIndex('sessions', ['current_turn_id']);

    await context.createTable('messages', {
      ordinal: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
      id: { type: DataTypes.UUID, allowNull: false, unique: true },
      session_id: {
        type: DataTypes.UUID,
        allowNull: false,
        references: { model: 'sessions', key: 'id' },
        onDelete: 'CASCADE',
      },
      role: { type: DataTypes.STRING(16), allowNull: false },
      content: { type: DataTypes.TEXT, allowNull: false },
      tool_calls: { type: DataTypes.JSON, allowNull: false },
      input_tokens: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
      output_tokens: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
      workflow_id: { type: DataTypes.STRING(64), allowNull: true },
      mode: { type: DataTypes.STRING(16), allowNull: true },
      metadata: { type: DataTypes.JSON, allowNull: false },
      // The user message an assistant message answers: unique, so a redelivered turn cannot store
      // a second reply.
      reply_to: { type: DataTypes.UUID, allowNull: true, unique: true },
      created_at: { type: DataTypes.DATE, allowNull: false },
    });
    await context.addIndex('messages', ['session_id', 'ordinal']);
  },
  down: async ({ context }) => {
    await context.dropTable('messages');
    await context.dropTable('sessions');
  },
};
