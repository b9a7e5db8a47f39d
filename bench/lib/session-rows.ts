import { randomUUID } from 'node:crypto';
import { countTokens } from '../../src/agent/tokens';
import { loadConfig } from '../../src/config';
import { openDatabase, type Database } from '../../src/db/database';
import { initModels, type Models } from '../../src/db/models';
import { createLogger } from '../../src/logs/logger';
import type { BenchHub } from './hub';

/**
 * A second connection to a benchmarked hub's database, for set-up the API would make slow: creating
 * thousands of sessions at once, and freeing them between runs (a session takes one turn at a time,
 * and with no worker its turn never ends). Never used while a run is measured.
 */
export class SessionRows {
  private constructor(
    private readonly database: Database,
    private readonly models: Models,
  ) {}

  static async open(hub: BenchHub, env: Record<string, string | undefined>): Promise<SessionRows> {
    const { config } = loadConfig({ env, cwd: hub.dataDir });
    const database = await openDatabase(config, createLogger({ level: 'silent', format: 'json', name: 'bench' }));
    return new SessionRows(database, initModels(database.sequelize));
  }

  /** Inserts `count` idle web sessions owned by `ownerId`, as `POST /sessions` would; returns their ids. */
  async create(ownerId: string, count: number): Promise<string[]> {
    const rows = Array.from({ length: count }, (_, index) => ({
      id: randomUUID(),
      name: `bench ${index}`,
      owner_id: ownerId,
      channel: 'web',
      session_key: null,
      active_workflow_id: null,
      config: {},
      active_tools: [],
      current_turn_id: null,
      turn_phase: null,
      archived_at: null,
    }));
    const batch = 1_000; // SQLite limits the variables of one statement
    for (let start = 0; start < rows.length; start += batch) await this.models.Session.bulkCreate(rows.slice(start, start + batch));
    return rows.map((row) => row.id);
  }

  /**
   * Adds `count` messages to each session, alternating user and assistant, as earlier turns would have
   * stored them: each reply names the message it answers (`reply_to`, `turn_id`), and the session has
   * answered them all (`answered_through`), so none looks like a backlog still owed an answer.
   */
  async fillHistory(sessionIds: readonly string[], count: number): Promise<void> {
    for (const sessionId of sessionIds) {
      let asked = '';
      const rows = Array.from({ length: count }, (_, index) => {
        const turn = Math.floor(index / 2);
        const user = index % 2 === 0;
        const id = randomUUID();
        if (user) asked = id;
        return {
          id,
          session_id: sessionId,
          role: user ? ('user' as const) : ('assistant' as const),
          content: user
            ? `Earlier question number ${turn}: what changed in the deployment?`
            : `Earlier answer number ${turn}: the deployment moved to the new cluster.`,
          tool_calls: [],
          workflow_id: null,
          mode: 'normal',
          metadata: {},
          reply_to: user ? null : asked,
          turn_id: asked,
        };
      }).map((row) => ({ ...row, token_count: countTokens(row.content) })); // as the hub stores them
      for (let start = 0; start < rows.length; start += 200) await this.models.Message.bulkCreate(rows.slice(start, start + 200));
      const newest = Number(await this.models.Message.max('ordinal', { where: { session_id: sessionId } }));
      await this.models.Session.update({ answered_through: newest }, { where: { id: sessionId } });
    }
  }

  get sequelize() {
    return this.database.sequelize;
  }

  close(): Promise<void> {
    return this.database.close();
  }
}
