import { DataTypes } from 'sequelize';
import type { Migration } from '../migrator';

/**
 * What the full agent keeps: every message of a turn (tool calls and results too) tagged with its
 * turn, side-effecting tool runs by tool_call_id (never run twice), the confirmation a turn waits
 * for, the session's tool settings, and its memory (rolling summary).
 */
export const agent: Migration = {
  name: '0003-agent',
  up: async ({ context }) => {
    await context.addColumn('messages', 'turn_id', { type: DataTypes.UUID, allowNull: true });
    await context.addIndex('messages', ['turn_id']);
    // {approved: [tool], disabled: [tool]}; loaded tools stay in `active_tools`.
    await context.addColumn('sessions', 'tool_state', { type: DataTypes.JSON, allowNull: true });
    await context.addColumn('sessions', 'pending_confirmation', { type: DataTypes.JSON, allowNull: true });
    await context.addColumn('sessions', 'memory_mode', { type: DataTypes.STRING(16), allowNull: false, defaultValue: 'conversation' });
    await context.addColumn('sessions', 'memory_summary', { type: DataTypes.TEXT, allowNull: true });
    // Messages up to this ordinal are folded into the summary.
    await context.addColumn('sessions', 'memory_through', { type: DataTypes.INTEGER, allowNull: true });
    await context.addColumn('sessions', 'memory_updated_at', { type: DataTypes.DATE, allowNull: true });
    // Keyed by turn and call id: models such as local ones reuse ids like `call_0` across turns.
    await context.createTable('tool_runs', {
      turn_id: { type: DataTypes.UUID, primaryKey: true },
      tool_call_id: { type: DataTypes.STRING(128), primaryKey: true },
      session_id: { type: DataTypes.UUID, allowNull: false },
      name: { type: DataTypes.STRING(64), allowNull: false },
      status: { type: DataTypes.STRING(16), allowNull: false },
      created_at: { type: DataTypes.DATE, allowNull: false },
    });
  },
  down: async ({ context }) => {
    await context.dropTable('tool_runs');
    for (const column of ['memory_updated_at', 'memory_through', 'memory_summary', 'memory_mode', 'pending_confirmation', 'tool_state']) {
      await context.removeColumn('sessions', column);
    }
    await context.removeIndex('messages', ['turn_id']);
    await context.removeColumn('messages', 'turn_id');
  },
};
