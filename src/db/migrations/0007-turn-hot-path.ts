import { DataTypes } from 'sequelize';
import type { Migration } from '../migrator';

/**
 * The turn hot path (issue 13): a turn's in-flight state leaves the database (it lives in the turn
 * registry: memory or Redis), so a session keeps only `answered_through`, the ordinal of its newest
 * user message whose turn has ended; a user message after it is a turn still owed (recovered at
 * start). Messages keep their token count, so a conversation is never tokenised twice.
 * `current_turn_id`, `turn_phase`, `state` and `pending_confirmation` stay as columns (a released
 * migration is never edited) but are no longer written.
 */
export const turnHotPath: Migration = {
  name: '0007-turn-hot-path',
  up: async ({ context }) => {
    await context.addColumn('sessions', 'answered_through', { type: DataTypes.INTEGER, allowNull: true });
    await context.addColumn('messages', 'token_count', { type: DataTypes.INTEGER, allowNull: true });
    // Every user message has had its turn, except the one a session still marks as running.
    await context.sequelize.query(`
      UPDATE sessions SET answered_through = (
        SELECT MAX(m.ordinal) FROM messages m
        WHERE m.session_id = sessions.id AND m.role = 'user'
          AND m.ordinal < COALESCE((SELECT c.ordinal FROM messages c WHERE c.id = sessions.current_turn_id), m.ordinal + 1)
      )`);
    await context.sequelize.query("UPDATE sessions SET current_turn_id = NULL, turn_phase = NULL, state = 'idle', pending_confirmation = NULL");
  },
  down: async ({ context }) => {
    await context.removeColumn('messages', 'token_count');
    await context.removeColumn('sessions', 'answered_through');
  },
};
