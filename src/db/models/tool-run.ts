import { DataTypes, Model, type InferAttributes, type InferCreationAttributes, type Sequelize } from 'sequelize';

/** A side-effecting tool call, recorded (per turn) before it runs: a redelivered turn never runs it twice. */
export class ToolRunRow extends Model<InferAttributes<ToolRunRow>, InferCreationAttributes<ToolRunRow>> {
  declare tool_call_id: string;
  declare session_id: string;
  declare turn_id: string;
  declare name: string;
  declare status: 'running' | 'done' | 'failed';
  declare created_at: Date;
}

export function initToolRunModel(sequelize: Sequelize): typeof ToolRunRow {
  const model = class extends ToolRunRow {};
  model.init(
    {
      turn_id: { type: DataTypes.UUID, primaryKey: true },
      tool_call_id: { type: DataTypes.STRING(128), primaryKey: true },
      session_id: { type: DataTypes.UUID, allowNull: false },
      name: { type: DataTypes.STRING(64), allowNull: false },
      status: { type: DataTypes.STRING(16), allowNull: false },
      created_at: { type: DataTypes.DATE, allowNull: false },
    },
    { sequelize, tableName: 'tool_runs', timestamps: false },
  );
  return model;
}
