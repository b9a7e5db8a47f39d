import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { startService, type RunningService } from '../../src/main';
import type { StatementCount } from '../../src/db/turn-store';
import { ScriptedProvider } from '../fakes/scripted-provider';
import { GENEROUS_RATE_LIMITS } from '../helpers/auth-service';
import { testEnv } from '../helpers/env';
import { jsonBody, request } from '../helpers/http';
import { LogCapture } from '../helpers/log-capture';
import { createTestPostgresDatabase, type TestPostgresDatabase } from '../helpers/postgres';
import { deleteKeys, TEST_REDIS_URL, uniquePrefix } from '../helpers/redis';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir';
import { registerUser } from '../helpers/users';
import { openSocket, type TestSocket } from '../helpers/ws-client';

/**
 * The turn's database budget (issue 13), as counts: a change that adds a statement to the hot path
 * fails here. Accepting a message is one insert; running the turn reads once; ending it is one
 * transaction (SQLite: the reply and the session's totals, two statements; PostgreSQL: one). No
 * sequelize query at all on the way. A refused message (a turn runs) costs no statement.
 */
const BUDGET = {
  sqlite: { reads: 1, writes: 3 },
  postgres: { reads: 1, writes: 2 },
};

/**
 * With daily budgets on, a turn reads today's usage in its conversation's statement, and every reply
 * adds its tokens to usage in its own statement (SQLite: a trigger; PostgreSQL: the reply's CTE): the
 * budget is the same.
 */
const BUDGETS_YAML = 'usage:\n  budgets:\n    per_user: 1000000\n    users:\n      thrifty: 1\n';

describe.each([
  ['sqlite', 'budgets off'],
  ['postgres', 'budgets off'],
  ['sqlite', 'budgets on'],
  ['postgres', 'budgets on'],
] as const)('the statements of a turn (%s, %s)', (dialect, budgets) => {
  let service: RunningService;
  let database: TestPostgresDatabase | null = null;
  const prefix = uniquePrefix('budget');
  const provider = new ScriptedProvider();
  let api: string;
  let token: string;
  let sessionId: string;
  let socket: TestSocket;
  let sequelizeQueries = 0;

  beforeAll(async () => {
    const extra: Record<string, string> = { ...GENEROUS_RATE_LIMITS };
    if (dialect === 'postgres') {
      database = await createTestPostgresDatabase();
      Object.assign(extra, { SERVICE_DATABASE_URL: database.url, SERVICE_REDIS_URL: TEST_REDIS_URL, SERVICE_REDIS_PREFIX: prefix });
    }
    const cwd = makeTempDir();
    if (budgets === 'budgets on') writeFileSync(path.join(cwd, 'config.yaml'), BUDGETS_YAML);
    service = await startService({ env: testEnv(makeTempDir(), extra), cwd, logDestination: new LogCapture(), provider });
    service.storage.sequelize.addHook('beforeQuery', 'count', () => {
      sequelizeQueries += 1;
    });
    api = `http://127.0.0.1:${service.port}/api/v1`;
    token = (await registerUser(api, 'budget')).token;
    sessionId = (await request(`${api}/sessions`, jsonBody({}, { authorization: `Bearer ${token}` }))).body.data.id;
    socket = await openSocket(`ws://127.0.0.1:${service.port}/ws/v1/sessions/${sessionId}`, { headers: { authorization: `Bearer ${token}` } });
    await socket.nextOfType('agent_state');
    await turnOverRest('warm up'); // the first turn fills the caches (credentials, session access, workflows)
  });

  afterAll(async () => {
    socket.close();
    await service.stop();
    await database?.drop();
    await deleteKeys(prefix);
    removeTempDirs();
  });

  function post(text: string) {
    return request(`${api}/sessions/${sessionId}/messages`, jsonBody({ text }, { authorization: `Bearer ${token}` }));
  }

  async function turnOverRest(text: string): Promise<void> {
    const before = socket.frames.at(-1)?.seq ?? 0;
    expect((await post(text)).status).toBe(202);
    await socket.nextOfType('done', before);
  }

  function counting(): () => StatementCount & { sequelize: number } {
    const start = { ...service.storage.store.statements };
    const startSequelize = sequelizeQueries;
    return () => {
      const now = service.storage.store.statements;
      return {
        reads: now.reads - start.reads,
        writes: now.writes - start.writes,
        commits: now.commits - start.commits,
        messagesRead: now.messagesRead - start.messagesRead,
        sequelize: sequelizeQueries - startSequelize,
      };
    };
  }

  it(`an accepted message and its whole turn: ${BUDGET[dialect].reads} read, ${BUDGET[dialect].writes} writes, no sequelize`, async () => {
    const count = counting();
    await turnOverRest('How many statements does this take?');
    const used = count();
    expect({ reads: used.reads, writes: used.writes, sequelize: used.sequelize }).toEqual({ ...BUDGET[dialect], sequelize: 0 });
    expect(used.reads + used.writes).toBeLessThanOrEqual(4);
  });

  it("reads only the session's new message: the worker kept the conversation of the session's last turn", async () => {
    await turnOverRest('one more for the history');
    const count = counting();
    await turnOverRest('and the next one');
    // The new user message only, however long the history (a whole window read would be 5+ rows here).
    expect(count().messagesRead).toBe(1);
  });

  it('adds every answered turn to the usage of its day, user and channel', async () => {
    const usage = await request(`${api}/usage?group_by=user,channel`, { headers: { authorization: `Bearer ${token}` } });
    expect(usage.status).toBe(200);
    // Every turn so far was answered: the scripted model reports 11 input and 4 output tokens each.
    const [row] = usage.body.data.items;
    expect(usage.body.data.items).toHaveLength(1);
    expect(row).toMatchObject({ channel: 'web', user: { username: 'budget' }, input_tokens: 11 * row.turns, output_tokens: 4 * row.turns });
    expect(row.turns).toBeGreaterThanOrEqual(2);
  });

  if (budgets === 'budgets on') {
    it('refuses the turn of a user over their daily budget, from the usage read with the conversation', async () => {
      const thrifty = await registerUser(api, 'thrifty');
      const own = (await request(`${api}/sessions`, jsonBody({}, { authorization: `Bearer ${thrifty.token}` }))).body.data.id;
      const ask = () => request(`${api}/sessions/${own}/messages?sync=true`, jsonBody({ text: 'hello' }, { authorization: `Bearer ${thrifty.token}` }));
      expect((await ask()).status).toBe(200); // nothing spent yet: under a budget of 1 token
      const refused = await ask();
      expect(refused.status).toBe(429);
      expect(refused.body.error).toMatchObject({ code: 'BUDGET_EXCEEDED', message: expect.stringContaining('daily token budget') });
    });
  }

  it('a refused message (409 while a turn runs) touches no database', async () => {
    provider.pauseBefore = 1;
    const before = socket.frames.at(-1)?.seq ?? 0;
    expect((await post('first')).status).toBe(202);
    await provider.paused();
    const count = counting();
    const refused = await post('second');
    const used = count();
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe('TURN_IN_PROGRESS');
    expect(used).toEqual({ reads: 0, writes: 0, commits: 0, messagesRead: 0, sequelize: 0 });
    provider.pauseBefore = null;
    provider.release();
    await socket.nextOfType('done', before);
  });
});
