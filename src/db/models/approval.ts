import { DataTypes, Model, type CreationOptional, type InferAttributes, type InferCreationAttributes, type Sequelize } from 'sequelize';

/** An approval a policy asked for (issue 30): one per governed tool call. */
export class ApprovalRow extends Model<InferAttributes<ApprovalRow>, InferCreationAttributes<ApprovalRow>> {
  declare id: string;
  declare session_id: string;
  declare turn_id: string;
  declare tool_call_id: string;
  declare tool: string;
  declare workflow: string | null;
  /** The policy that applied, as it was then (`index`: its place in the workflow's list). */
  declare policy: Record<string, unknown>;
  /** Who asked: the user id, or `<channel>:<contact id>`. */
  declare requester: string;
  declare session_key: string | null;
  declare message: string;
  declare parameters: Record<string, unknown>;
  declare state: 'pending' | 'approved' | 'denied' | 'timed_out' | 'abandoned';
  declare action: string | null;
  /** 0: the policy's approvers; 1: escalated to `escalate_to`. */
  declare stage: CreationOptional<number>;
  declare expires_at: Date;
  declare decided_by: string | null;
  declare decided_at: Date | null;
  declare created_at: Date;
}

/** One distinct approver's click on an approval. */
export class ApprovalVoteRow extends Model<InferAttributes<ApprovalVoteRow>, InferCreationAttributes<ApprovalVoteRow>> {
  declare approval_id: string;
  /** The actor's key (`user:<id>`, `slack:U123`). */
  declare voter: string;
  declare action: string;
  declare stage: number;
  declare actor: Record<string, unknown>;
  /** The hub user the click resolved to (its username), when there is one. */
  declare hub_user: string | null;
  declare created_at: Date;
}

export function initApprovalModels(sequelize: Sequelize): { Approval: typeof ApprovalRow; ApprovalVote: typeof ApprovalVoteRow } {
  const Approval = class extends ApprovalRow {};
  Approval.init(
    {
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
    },
    { sequelize, tableName: 'approvals', timestamps: false },
  );
  const ApprovalVote = class extends ApprovalVoteRow {};
  ApprovalVote.init(
    {
      approval_id: { type: DataTypes.UUID, primaryKey: true },
      voter: { type: DataTypes.STRING(200), primaryKey: true },
      action: { type: DataTypes.STRING(16), allowNull: false },
      stage: { type: DataTypes.INTEGER, allowNull: false },
      actor: { type: DataTypes.JSON, allowNull: false },
      hub_user: { type: DataTypes.STRING(64), allowNull: true },
      created_at: { type: DataTypes.DATE, allowNull: false },
    },
    { sequelize, tableName: 'approval_votes', timestamps: false },
  );
  return { Approval, ApprovalVote };
}
