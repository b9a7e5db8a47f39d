import { DataTypes, Model, type CreationOptional, type InferAttributes, type InferCreationAttributes, type Sequelize } from 'sequelize';

export type MessageRole = 'user' | 'assistant' | 'system' | 'tool';

export class MessageRow extends Model<InferAttributes<MessageRow>, InferCreationAttributes<MessageRow>> {
  declare ordinal: CreationOptional<number>;
  declare id: string;
  declare session_id: string;
  declare role: MessageRole;
  declare content: string;
  declare tool_calls: unknown[];
  declare input_tokens: CreationOptional<number>;
  declare output_tokens: CreationOptional<number>;
  declare workflow_id: string | null;
  declare mode: string | null;
  declare metadata: Record<string, unknown>;
  declare reply_to: string | null;
  /** The user message (turn) this message belongs to; null for messages before tools existed. */
  declare turn_id: CreationOptional<string | null>;
  /** Tokens of `content` (gpt-tokenizer), counted once when stored; null for rows stored before it was kept. */
  declare token_count: CreationOptional<number | null>;
  declare created_at: CreationOptional<Date>;
}

export function initMessageModel(sequelize: Sequelize): typeof MessageRow {
  // A subclass per database, so two databases in one process (tests, tools) never share a model.
  const model = class extends MessageRow {};
  model.init(
    {
      ordinal: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
      id: { type: DataTypes.UUID, allowNull: false, unique: true },
      session_id: { type: DataTypes.UUID, allowNull: false },
      role: { type: DataTypes.STRING(16), allowNull: false },
      content: { type: DataTypes.TEXT, allowNull: false },
      tool_calls: { type: DataTypes.JSON, allowNull: false },
      input_tokens: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
      output_tokens: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
      workflow_id: { type: DataTypes.STRING(64), allowNull: true },
      mode: { type: DataTypes.STRING(16), allowNull: true },
      metadata: { type: DataTypes.JSON, allowNull: false },
      reply_to: { type: DataTypes.UUID, allowNull: true },
      turn_id: { type: DataTypes.UUID, allowNull: true },
      token_count: { type: DataTypes.INTEGER, allowNull: true },
      created_at: { type: DataTypes.DATE, allowNull: false },
    },
    { sequelize, tableName: 'messages', timestamps: true, createdAt: 'created_at', updatedAt: false },
  );
  return model;
}
