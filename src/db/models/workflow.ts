import { DataTypes, Model, type CreationOptional, type InferAttributes, type InferCreationAttributes, type Sequelize } from 'sequelize';

export interface Triggers {
  keywords: string[];
  regex: string[];
  contact_tags: string[];
  min_score?: number;
}

export class WorkflowRow extends Model<InferAttributes<WorkflowRow>, InferCreationAttributes<WorkflowRow>> {
  declare ordinal: CreationOptional<number>;
  declare id: string;
  declare name: string;
  declare description: string;
  declare system_prompt: string;
  declare tool_list: string;
  declare knowledge_base_ids: string[];
  declare triggers: Triggers;
  declare binding_channels: string[];
  /** The mid-turn policy on chat channels (`reject`, `queue`, `steer`, `collect`); null: the channel's default. */
  declare mid_turn: CreationOptional<string | null>;
  /** The approval policies (issue 30; src/approvals/policy-schema.ts); null: none. */
  declare approvals: CreationOptional<unknown[] | null>;
  /** The channel's fallback: answers, on the channels it is bound to, what no trigger matches (column `is_default`). */
  declare default: CreationOptional<boolean>;
  /** Webhooks and schedules (issue 29); null in rows from before them: none. */
  declare events: CreationOptional<{ webhooks: unknown[]; schedules: unknown[] } | null>;
  declare created_at: CreationOptional<Date>;
  declare updated_at: CreationOptional<Date>;
}

export class ContactRow extends Model<InferAttributes<ContactRow>, InferCreationAttributes<ContactRow>> {
  declare session_key: string;
  declare display_name: string | null;
  declare tags: string[];
  declare workflow_id: string | null;
  declare created_at: CreationOptional<Date>;
  declare updated_at: CreationOptional<Date>;
}

export function initWorkflowModels(sequelize: Sequelize): { Workflow: typeof WorkflowRow; Contact: typeof ContactRow } {
  const Workflow = class extends WorkflowRow {};
  Workflow.init(
    {
      ordinal: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
      id: { type: DataTypes.UUID, allowNull: false, unique: true },
      name: { type: DataTypes.STRING(64), allowNull: false, unique: true },
      description: { type: DataTypes.TEXT, allowNull: false },
      system_prompt: { type: DataTypes.TEXT, allowNull: false },
      tool_list: { type: DataTypes.TEXT, allowNull: false },
      knowledge_base_ids: { type: DataTypes.JSON, allowNull: false },
      triggers: { type: DataTypes.JSON, allowNull: false },
      binding_channels: { type: DataTypes.JSON, allowNull: false },
      mid_turn: { type: DataTypes.STRING(16), allowNull: true, defaultValue: null },
      approvals: { type: DataTypes.JSON, allowNull: true, defaultValue: null },
      default: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false, field: 'is_default' },
      events: { type: DataTypes.JSON, allowNull: true, defaultValue: null },
      created_at: { type: DataTypes.DATE, allowNull: false },
      updated_at: { type: DataTypes.DATE, allowNull: false },
    },
    { sequelize, tableName: 'workflows', timestamps: true, createdAt: 'created_at', updatedAt: 'updated_at' },
  );
  const Contact = class extends ContactRow {};
  Contact.init(
    {
      session_key: { type: DataTypes.STRING(255), primaryKey: true },
      display_name: { type: DataTypes.STRING(200), allowNull: true },
      tags: { type: DataTypes.JSON, allowNull: false },
      workflow_id: { type: DataTypes.UUID, allowNull: true },
      created_at: { type: DataTypes.DATE, allowNull: false },
      updated_at: { type: DataTypes.DATE, allowNull: false },
    },
    { sequelize, tableName: 'contacts', timestamps: true, createdAt: 'created_at', updatedAt: 'updated_at' },
  );
  return { Workflow, Contact };
}
