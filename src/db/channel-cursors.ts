import { QueryTypes, type Sequelize } from 'sequelize';
import { CHANNEL_CURSOR_LIMITS, type ChannelCursors } from '../core/channel-cursors';

/** Channels' positions on the hub's database (SQLite or PostgreSQL: the statements are portable). */
export class SqlChannelCursors implements ChannelCursors {
  constructor(private readonly sequelize: Sequelize) {}

  async read(channel: string): Promise<Map<string, string>> {
    const rows = await this.sequelize.query<{ cursor_key: string; value: string }>('SELECT cursor_key, value FROM channel_cursors WHERE channel = :channel', {
      replacements: { channel },
      type: QueryTypes.SELECT,
    });
    return new Map(rows.map((row) => [row.cursor_key, row.value]));
  }

  async write(channel: string, entries: ReadonlyMap<string, string>): Promise<void> {
    const now = new Date();
    for (const [key, value] of entries) {
      if (key.length > CHANNEL_CURSOR_LIMITS.keyChars || value.length > CHANNEL_CURSOR_LIMITS.valueChars)
        throw new Error(`channel cursor ${channel}/${key.slice(0, 40)} is too long`);
      await this.sequelize.query(
        `INSERT INTO channel_cursors (channel, cursor_key, value, updated_at) VALUES (:channel, :key, :value, :now)
         ON CONFLICT (channel, cursor_key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
        { replacements: { channel, key, value, now } },
      );
    }
  }
}
