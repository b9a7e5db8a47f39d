import { DataTypes, Model, type CreationOptional, type InferAttributes, type InferCreationAttributes, type Sequelize } from 'sequelize';

/** One row of the audit trail (migration 0009). */
export class AuditEventRow extends Model<InferAttributes<AuditEventRow>, InferCreationAttributes<AuditEventRow>> {
  declare ordinal: CreationOptional<number>;
  declare id: string;
  declare created_at: Date;
  declare kind: string;
  /** `user:<id>`, `slack:U123`, `system:timeout` (src/core/actor.ts). */
  declare actor: string;
  declare actor_kind: string;
  declare actor_name: string | null;
  declare subject: string | null;
  declare action: string;
  declare session_id: string | null;
  declare details: Record<string, unknown>;
}

/** Tokens of one UTC day, user, workflow ('' for none) and channel (migration 0009). */
export class UsageDailyRow extends Model<InferAttributes<UsageDailyRow>, InferCreationAttributes<UsageDailyRow>> {
  declare day: string;
  declare user_key: string;
  declare workflow_id: string;
  declare channel: string;
  declare input_tokens: number;
  declare output_tokens: number;
  declare turns: number;
}

export function initObservabilityModels(sequelize: Sequelize) {
  const AuditEvent = class extends AuditEventRow {};
  AuditEvent.init(
    {
      ordinal: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
      id: { type: DataTypes.UUID, allowNull: false, unique: true },
      created_at: { type: DataTypes.DATE, allowNull: false },
      kind: { type: DataTypes.STRING(32), allowNull: false },
      actor: { type: DataTypes.STRING(200), allowNull: false },
      actor_kind: { type: DataTypes.STRING(16), allowNull: false },
      actor_name: { type: DataTypes.STRING(200), allowNull: true },
      subject: { type: DataTypes.STRING(200), allowNull: true },
      action: { type: DataTypes.STRING(64), allowNull: false },
      session_id: { type: DataTypes.UUID, allowNull: true },
      details: { type: DataTypes.JSON, allowNull: false },
    },
    { sequelize, tableName: 'audit_events', timestamps: false },
  );
  const UsageDaily = class extends UsageDailyRow {};
  UsageDaily.init(
    {
      day: { type: DataTypes.STRING(10), primaryKey: true },
      user_key: { type: DataTypes.STRING(200), primaryKey: true },
      workflow_id: { type: DataTypes.STRING(64), primaryKey: true },
      channel: { type: DataTypes.STRING(32), primaryKey: true },
      // BIGINT comes back from pg as a string: read with Number().
      input_tokens: { type: DataTypes.BIGINT, allowNull: false },
      output_tokens: { type: DataTypes.BIGINT, allowNull: false },
      turns: { type: DataTypes.INTEGER, allowNull: false },
    },
    { sequelize, tableName: 'usage_daily', timestamps: false },
  );
  return { AuditEvent, UsageDaily };
}
