import { DataTypes } from 'sequelize';
import type { Migration } from '../migrator';

/**
 * Approvals (issue 30):
 * - `workflows.approvals`: the workflow's approval policies (JSON list; null: none).
 * - `approvals`: one per tool call a policy governs (unique per turn and call id, so a redelivered
 *   turn asks the same approval again), its state and deadline (`expires_at`, moved once by an
 *   escalation).
 * - `approval_votes`: one row per distinct approver and approval (the primary key makes a second
 *   click by the same person count once, on any process).
 */
export const approvals: Migration = {
  name: '0011-approvals',
  up: async ({ context }) => {
    await context.addColumn('workflows', 'approvals', { type: DataTypes.JSON, allowNull: true });
    await context.createTable('approvals', {
      id: { type: DataTypes.UUID, primaryKey: true },
      session_id: { type: DataTypes.UUID, allowNull: false },
      turn_id: { type: DataTypes.UUID, allowNull: false },
      tool_call_id: { type: DataTypes.STRING(128), allowNull: false },
      tool: { type: DataTypes.STRING(128), allowNull: false },
      workflow: { type: DataTypes.STRING(64), allowNull: true },
      policy: { type: DataTypes.JSON, allowNull: false },
      requester: { type: DataTypes.STRING(200), allowNull: false },
      session_key: { type: DataTypes.STRING(255), allowNull: true },
      message: { type: DataTypes.TEXT, allowNull: false },
      parameters: { type: DataTypes.JSON, allowNull: false },
      state: { type: DataTypes.STRING(16), allowNull: false },
      action: { type: DataTypes.STRING(16), allowNull: true },
      stage: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
      expires_at: { type: DataTypes.DATE, allowNull: false },
      decided_by: { type: DataTypes.STRING(200), allowNull: true },
      decided_at: { type: DataTypes.DATE, allowNull: true },
      created_at: { type: DataTypes.DATE, allowNull: false },
    });
    await context.addIndex('approvals', ['turn_id', 'tool_call_id'], { unique: true });
    await context.addIndex('approvals', ['state', 'created_at']);
    await context.createTable('approval_votes', {
      approval_id: { type: DataTypes.UUID, primaryKey: true },
      voter: { type: DataTypes.STRING(200), primaryKey: true },
      action: { type: DataTypes.STRING(16), allowNull: false },
      stage: { type: DataTypes.INTEGER, allowNull: false },
      actor: { type: DataTypes.JSON, allowNull: false },
      hub_user: { type: DataTypes.STRING(64), allowNull: true },
      created_at: { type: DataTypes.DATE, allowNull: false },
    });
  },
  down: async ({ context }) => {
    await context.dropTable('approval_votes');
    await context.dropTable('approvals');
    await context.removeColumn('workflows', 'approvals');
  },
};
