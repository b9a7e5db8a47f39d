import { DataTypes } from 'sequelize';
import type { Migration } from '../migrator';

/**
 * Observability (issue 20):
 * - `audit_events`: the audit trail (GET /api/v1/audit), paged by `ordinal`.
 * - `usage_daily`: tokens per UTC day, user (a user id, or a chat contact `slack:U123`), workflow
 *   and channel (GET /api/v1/usage, daily budgets). A turn's reply adds its tokens in the same
 *   statement that stores it: SQLite by the trigger below, PostgreSQL in the reply's own statement
 *   (src/db/postgres/postgres-turn-store.ts); no statement of its own.
 * - `messages.sender`: who sent a user message (the user id, or `<channel>:<contact id>`), so its
 *   turn's tokens count for them.
 */
export const observability: Migration = {
  name: '0009-observability',
  up: async ({ context }) => {
    await context.createTable('audit_events', {
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
    });
    await context.addIndex('audit_events', ['created_at']);
    await context.addIndex('audit_events', ['actor', 'ordinal']);
    await context.addIndex('audit_events', ['kind', 'ordinal']);
    await context.createTable('usage_daily', {
      day: { type: DataTypes.STRING(10), primaryKey: true },
      user_key: { type: DataTypes.STRING(200), primaryKey: true },
      // '' for turns no workflow answered (a primary key column cannot be null).
      workflow_id: { type: DataTypes.STRING(64), primaryKey: true },
      channel: { type: DataTypes.STRING(32), primaryKey: true },
      input_tokens: { type: DataTypes.BIGINT, allowNull: false, defaultValue: 0 },
      output_tokens: { type: DataTypes.BIGINT, allowNull: false, defaultValue: 0 },
      turns: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
    });
    await context.addColumn('messages', 'sender', { type: DataTypes.STRING(200), allowNull: true });
    if (context.sequelize.getDialect() === 'sqlite') {
      // SQLite has no data-modifying CTE: the reply's insert adds its usage through this trigger,
      // in the same statement (one native call), so a turn still costs the statements it did.
      await context.sequelize.query(`
        CREATE TRIGGER usage_of_reply AFTER INSERT ON messages
        WHEN NEW.role = 'assistant' AND NEW.reply_to IS NOT NULL
        BEGIN
          INSERT INTO usage_daily (day, user_key, workflow_id, channel, input_tokens, output_tokens, turns)
          SELECT substr(NEW.created_at, 1, 10), COALESCE((SELECT sender FROM messages WHERE id = NEW.reply_to), s.owner_id),
                 COALESCE(NEW.workflow_id, ''), s.channel, NEW.input_tokens, NEW.output_tokens, 1
          FROM sessions s WHERE s.id = NEW.session_id
          ON CONFLICT (day, user_key, workflow_id, channel) DO UPDATE SET
            input_tokens = input_tokens + excluded.input_tokens,
            output_tokens = output_tokens + excluded.output_tokens,
            turns = turns + 1;
        END`);
    }
  },
  down: async ({ context }) => {
    if (context.sequelize.getDialect() === 'sqlite') await context.sequelize.query('DROP TRIGGER IF EXISTS usage_of_reply');
    await context.removeColumn('messages', 'sender');
    await context.dropTable('usage_daily');
    await context.dropTable('audit_events');
  },
};
