import { DataTypes, Model, type CreationOptional, type InferAttributes, type InferCreationAttributes, type Sequelize } from 'sequelize';

/** Where a delivery stands: received → verified → turn → delivered, or failed (migration 0010). */
export type DeliveryStatus = 'received' | 'verified' | 'turn' | 'delivered' | 'failed';

/** One webhook request or schedule fire and what became of it. */
export class EventDeliveryRow extends Model<InferAttributes<EventDeliveryRow>, InferCreationAttributes<EventDeliveryRow>> {
  declare id: string;
  declare workflow: string;
  declare source: 'webhook' | 'schedule';
  declare name: string;
  /** The sender's delivery id (X-GitHub-Delivery, webhook-id), or the fire's due time for a schedule. */
  declare external_id: string;
  declare body_hash: string | null;
  /** The request body as received (at most 1 MiB), for a look after the fact. */
  declare payload: string | null;
  declare thread_key: string | null;
  declare deliver: string;
  declare status: DeliveryStatus;
  declare session_id: string | null;
  declare turn_id: string | null;
  declare platform_message_id: string | null;
  declare attempts: CreationOptional<number>;
  declare reason: string | null;
  /** The rendered message, kept so that a delivery whose process died can start or finish its turn later. */
  declare message: CreationOptional<string | null>;
  /** The process working on the delivery, and until when its lease runs (renewed while it works). */
  declare claimed_by: CreationOptional<string | null>;
  declare claimed_until: CreationOptional<Date | null>;
  declare created_at: CreationOptional<Date>;
  declare updated_at: CreationOptional<Date>;
}

/** The chat message that started a thread key's thread in one delivery target. */
export class EventThreadRow extends Model<InferAttributes<EventThreadRow>, InferCreationAttributes<EventThreadRow>> {
  declare session_key: string;
  declare deliver: string;
  declare root_message_id: string;
  declare created_at: Date;
}

/** A chat conversation (a Slack thread) that continues another session (an event's). */
export class SessionAliasRow extends Model<InferAttributes<SessionAliasRow>, InferCreationAttributes<SessionAliasRow>> {
  declare session_key: string;
  declare session_id: string;
  declare created_at: Date;
}

/** A schedule's state across restarts. */
export class EventScheduleRow extends Model<InferAttributes<EventScheduleRow>, InferCreationAttributes<EventScheduleRow>> {
  declare workflow: string;
  declare name: string;
  declare paused: boolean;
  declare last_fire_at: Date | null;
  declare last_outcome: string | null;
  declare last_delivery_id: string | null;
  declare updated_at: Date;
}

/** The columns of `event_deliveries` (migrations 0013, 0014). */
const DELIVERY_COLUMNS = {
  id: { type: DataTypes.UUID, primaryKey: true },
  workflow: { type: DataTypes.STRING(64), allowNull: false },
  source: { type: DataTypes.STRING(16), allowNull: false },
  name: { type: DataTypes.STRING(64), allowNull: false },
  external_id: { type: DataTypes.STRING(200), allowNull: false },
  body_hash: { type: DataTypes.STRING(64), allowNull: true },
  payload: { type: DataTypes.TEXT, allowNull: true },
  thread_key: { type: DataTypes.STRING(128), allowNull: true },
  deliver: { type: DataTypes.STRING(100), allowNull: false },
  status: { type: DataTypes.STRING(16), allowNull: false },
  session_id: { type: DataTypes.UUID, allowNull: true },
  turn_id: { type: DataTypes.UUID, allowNull: true },
  platform_message_id: { type: DataTypes.STRING(100), allowNull: true },
  attempts: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
  reason: { type: DataTypes.STRING(500), allowNull: true },
  message: { type: DataTypes.TEXT, allowNull: true },
  claimed_by: { type: DataTypes.STRING(64), allowNull: true },
  claimed_until: { type: DataTypes.DATE, allowNull: true },
  created_at: { type: DataTypes.DATE, allowNull: false },
  updated_at: { type: DataTypes.DATE, allowNull: false },
};

export function initEventModels(sequelize: Sequelize) {
  const EventDelivery = class extends EventDeliveryRow {};
  EventDelivery.init(DELIVERY_COLUMNS, { sequelize, tableName: 'event_deliveries', timestamps: true, createdAt: 'created_at', updatedAt: 'updated_at' });
  const EventThread = class extends EventThreadRow {};
  EventThread.init(
    {
      session_key: { type: DataTypes.STRING(255), primaryKey: true },
      deliver: { type: DataTypes.STRING(100), primaryKey: true },
      root_message_id: { type: DataTypes.STRING(100), allowNull: false },
      created_at: { type: DataTypes.DATE, allowNull: false },
    },
    { sequelize, tableName: 'event_threads', timestamps: false },
  );
  const SessionAlias = class extends SessionAliasRow {};
  SessionAlias.init(
    {
      session_key: { type: DataTypes.STRING(255), primaryKey: true },
      session_id: { type: DataTypes.UUID, allowNull: false },
      created_at: { type: DataTypes.DATE, allowNull: false },
    },
    { sequelize, tableName: 'session_aliases', timestamps: false },
  );
  const EventSchedule = class extends EventScheduleRow {};
  EventSchedule.init(
    {
      workflow: { type: DataTypes.STRING(64), primaryKey: true },
      name: { type: DataTypes.STRING(64), primaryKey: true },
      paused: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
      last_fire_at: { type: DataTypes.DATE, allowNull: true },
      last_outcome: { type: DataTypes.STRING(16), allowNull: true },
      last_delivery_id: { type: DataTypes.UUID, allowNull: true },
      updated_at: { type: DataTypes.DATE, allowNull: false },
    },
    { sequelize, tableName: 'event_schedules', timestamps: false },
  );
  return { EventDelivery, EventThread, SessionAlias, EventSchedule };
}
