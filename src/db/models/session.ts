import type { AgentState } from '../../core/events';
import { DataTypes, Model, type CreationOptional, type InferAttributes, type InferCreationAttributes, type Sequelize } from 'sequelize';

export type TurnPhase = 'queued' | 'running';

/** Per-session tool settings: approved for the whole session (allow_all), or disabled. */
export interface ToolState {
  approved: string[];
  disabled: string[];
}

/** The `tool_confirm_request` a turn waits for, kept so a reconnecting socket is asked again. */
export interface PendingConfirmation {
  confirmation_id: string;
  tool: string;
  parameters: Record<string, unknown>;
  message: string;
  turn_id: string;
}

export class SessionRow extends Model<InferAttributes<SessionRow>, InferCreationAttributes<SessionRow>> {
  declare ordinal: CreationOptional<number>;
  declare id: string;
  declare name: string;
  declare owner_id: string;
  declare channel: string;
  declare session_key: string | null;
  declare state: CreationOptional<AgentState>;
  declare active_workflow_id: string | null;
  declare config: Record<string, unknown>;
  declare active_tools: string[];
  declare input_tokens: CreationOptional<number>;
  declare output_tokens: CreationOptional<number>;
  declare current_turn_id: string | null;
  declare turn_phase: TurnPhase | null;
  declare archived_at: Date | null;
  declare tool_state: ToolState | null;
  declare pending_confirmation: PendingConfirmation | null;
  declare memory_mode: CreationOptional<string>;
  declare memory_summary: CreationOptional<string | null>;
  declare memory_through: CreationOptional<number | null>;
  declare memory_updated_at: CreationOptional<Date | null>;
  /** The ordinal of the newest user message whose turn has ended; later ones are turns still owed. */
  declare answered_through: CreationOptional<number | null>;
  declare created_at: CreationOptional<Date>;
  declare updated_at: CreationOptional<Date>;
}

export function initSessionModel(sequelize: Sequelize): typeof SessionRow {
  // A subclass per database, so two databases in one process (tests, tools) never share a model.
  const model = class extends SessionRow {};
  model.init(
    {
      ordinal: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
      id: { type: DataTypes.UUID, allowNull: false, unique: true },
      name: { type: DataTypes.STRING(200), allowNull: false },
      owner_id: { type: DataTypes.STRING(64), allowNull: false },
      channel: { type: DataTypes.STRING(32), allowNull: false },
      session_key: { type: DataTypes.STRING(255), allowNull: true },
      state: { type: DataTypes.STRING(32), allowNull: false, defaultValue: 'idle' },
      active_workflow_id: { type: DataTypes.STRING(64), allowNull: true },
      config: { type: DataTypes.JSON, allowNull: false },
      active_tools: { type: DataTypes.JSON, allowNull: false },
      input_tokens: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
      output_tokens: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
      current_turn_id: { type: DataTypes.UUID, allowNull: true },
      turn_phase: { type: DataTypes.STRING(16), allowNull: true },
      archived_at: { type: DataTypes.DATE, allowNull: true },
      tool_state: { type: DataTypes.JSON, allowNull: true },
      pending_confirmation: { type: DataTypes.JSON, allowNull: true },
      memory_mode: { type: DataTypes.STRING(16), allowNull: false, defaultValue: 'conversation' },
      memory_summary: { type: DataTypes.TEXT, allowNull: true },
      memory_through: { type: DataTypes.INTEGER, allowNull: true },
      memory_updated_at: { type: DataTypes.DATE, allowNull: true },
      answered_through: { type: DataTypes.INTEGER, allowNull: true },
      created_at: { type: DataTypes.DATE, allowNull: false },
      updated_at: { type: DataTypes.DATE, allowNull: false },
    },
    { sequelize, tableName: 'sessions', timestamps: true, createdAt: 'created_at', updatedAt: 'updated_at' },
  );
  return model;
}
