import { DataTypes, Model, type InferAttributes, type InferCreationAttributes, type Sequelize } from 'sequelize';

/** A platform event already taken in (see migration 0006). */
export class InboundEventRow extends Model<InferAttributes<InboundEventRow>, InferCreationAttributes<InboundEventRow>> {
  declare channel: string;
  declare external_id: string;
  declare session_id: string | null;
  declare message_id: string | null;
  declare created_at: Date;
}

export function initInboundEventModel(sequelize: Sequelize): typeof InboundEventRow {
  const model = class extends InboundEventRow {};
  model.init(
    {
      channel: { type: DataTypes.STRING(32), primaryKey: true },
      external_id: { type: DataTypes.STRING(128), primaryKey: true },
      session_id: { type: DataTypes.UUID, allowNull: true },
      message_id: { type: DataTypes.UUID, allowNull: true },
      created_at: { type: DataTypes.DATE, allowNull: false },
    },
    { sequelize, tableName: 'inbound_events', timestamps: false },
  );
  return model;
}
