import { randomUUID } from 'node:crypto';
import { openDatabase, type Database } from '../../src/db/database';
import { migrateToLatest } from '../../src/db/migrator';
import { PostgresTurnStore } from '../../src/db/postgres/postgres-turn-store';
import { SqliteTurnStore } from '../../src/db/sqlite/sqlite-turn-store';
import type { NewMessage, NewSession, TurnStore } from '../../src/db/turn-store';
import { createLogger } from '../../src/logs/logger';
import { LogCapture } from '../helpers/log-capture';
import { createTestPostgresDatabase, type TestPostgresDatabase } from '../helpers/postgres';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir';

/**
 * The hot-path stores run prepared statements, named on PostgreSQL: pg prepares a name once per
 * connection and refuses the same name with another text ("Prepared statements must be unique"). A
 * statement whose SQL varied with its input (the session insert's column list followed the fields a
 * caller set: issue 25) worked for the first shape a connection saw and answered 500 for the next.
 * Here every store method runs with each shape of input it takes, on a pool of ONE connection, so a
 * name reused with another text fails at once; SQLite runs the same cases.
 */
const logger = createLogger({ level: 'warn', format: 'json', name: 'test', destination: new LogCapture() });

interface Backend {
  store: TurnStore;
  database: Database;
  cleanup(): Promise<void>;
}

const backends: [string, () => Promise<Backend>][] = [
  [
    'SQLite',
    async () => {
      const dataDir = makeTempDir();
      const database = await openDatabase({ data_dir: dataDir, database: { url: null, pool_max: 1 } }, logger);
      await migrateToLatest(database, logger);
      const store = await SqliteTurnStore.open(database.file!);
      return { store, database, cleanup: async () => undefined };
    },
  ],
  [
    'PostgreSQL',
    async () => {
      const pg: TestPostgresDatabase = await createTestPostgresDatabase();
      const database = await openDatabase({ data_dir: makeTempDir(), database: { url: pg.url, pool_max: 2 } }, logger);
      await migrateToLatest(database, logger);
      // One connection: every statement of the test is prepared on it.
      return { store: new PostgresTurnStore(pg.url, 1), database, cleanup: () => pg.drop() };
    },
  ],
];

function newSession(ownerId: string, extra: Partial<NewSession> = {}): NewSession {
  return {
    id: randomUUID(),
    name: 'statements',
    owner_id: ownerId,
    channel: 'web',
    session_key: null,
    active_workflow_id: null,
    config: {},
    active_tools: [],
    archived_at: null,
    tool_state: null,
    ...extra,
  };
}

function userMessage(sessionId: string, text: string): NewMessage {
  const id = randomUUID();
  return {
    id,
    session_id: sessionId,
    role: 'user',
    content: text,
    tool_calls: [],
    input_tokens: 0,
    output_tokens: 0,
    token_count: 1,
    workflow_id: null,
    mode: 'normal',
    metadata: {},
    reply_to: null,
    turn_id: id,
    sender: null,
  };
}

describe.each(backends)('turn store statements on %s', (_name, open) => {
  let backend: Backend;
  let ownerId: string;

  beforeAll(async () => {
    backend = await open();
    ownerId = randomUUID();
    const now = new Date();
    await backend.database.sequelize.getQueryInterface().bulkInsert('users', [
      {
        id: ownerId,
        username: 'owner',
        username_key: 'owner',
        email: 'owner@example.com',
        password_hash: 'x',
        role: 'admin',
        is_active: true,
        created_at: now,
        updated_at: now,
      },
    ]);
  }, 60_000);

  afterAll(async () => {
    await backend?.store.close();
    await backend?.database.close();
    await backend?.cleanup();
    removeTempDirs();
  });

  it('creates sessions with and without a memory mode, whatever order their fields come in, on one connection', async () => {
    const { store } = backend;
    const plain = await store.createSession(newSession(ownerId));
    expect(plain.memory_mode).toBe('conversation');
    // What POST /sessions with {"config": {"memory_mode": …}} sends: the field first.
    const coded = await store.createSession({ memory_mode: 'code', ...newSession(ownerId, { config: { memory_mode: 'code' } }) });
    expect(coded.memory_mode).toBe('code');
    const last = newSession(ownerId, { session_key: 'telegram::1', channel: 'telegram', tool_state: { approved: ['calculator'], disabled: [] } });
    const reordered = await store.createSession(Object.fromEntries(Object.entries(last).reverse()) as unknown as NewSession);
    expect(reordered.session_key).toBe('telegram::1');
    const again = await store.createSession(newSession(ownerId));
    expect((await store.findSession(again.id))?.memory_mode).toBe('conversation');
    expect((await store.findSession(coded.id))?.memory_mode).toBe('code');
  });

  it('runs every other statement in each of its shapes on the same connection', async () => {
    const { store } = backend;
    const session = await store.createSession(newSession(ownerId));
    const first = userMessage(session.id, 'first');
    expect(await store.insertTurnMessage(first)).not.toBeNull();
    expect(await store.insertTurnMessage(userMessage(randomUUID(), 'no such session'))).toBeNull();
    const waiting = userMessage(session.id, 'second');
    await store.insertTurnMessage(waiting);
    const third = userMessage(session.id, 'third');
    await store.insertTurnMessage(third);
    expect((await store.owedTurns(session.id, 5)).map((turn) => turn.id)).toEqual([first.id, waiting.id, third.id]);
    expect(await store.changeOwedMessage(waiting.id, 'second, edited', 2)).toBe(true);
    expect(await store.changeOwedMessage(third.id, null, 0)).toBe(true);
    expect((await store.loadConversation(session.id))?.messages.map((message) => message.content)).toEqual(['first', 'second, edited']);
    expect((await store.loadConversation(session.id, 0, { day: '2026-01-01', turnId: first.id, workflowIds: [] }))?.usage).toEqual({ user: 0, workflows: {} });
    expect(await store.claimToolRun({ turnId: first.id, toolCallId: 'call-1', sessionId: session.id, name: 'calculator' })).toBe(true);
    expect(await store.claimToolRun({ turnId: first.id, toolCallId: 'call-1', sessionId: session.id, name: 'calculator' })).toBe(false);
    await store.finishToolRun(first.id, 'call-1', true);
    await store.saveSessionTools(session.id, ['calculator'], { approved: [], disabled: [] });
    const round = { ...userMessage(session.id, ''), role: 'assistant' as const, turn_id: first.id };
    await store.insertMessages([round]);
    await store.finishToolRound(round.id, [{ id: 'call-1' }], []);
    const reply = { ...userMessage(session.id, 'answer'), role: 'assistant' as const, reply_to: first.id, turn_id: first.id };
    expect(
      (await store.endTurn({ sessionId: session.id, turnId: first.id, reply, usage: { inputTokens: 3, outputTokens: 4 }, activeWorkflowId: null })).reply?.id,
    ).toBe(reply.id);
    // A second reply to the same message is refused (the same statement, another outcome).
    expect(
      (await store.endTurn({ sessionId: session.id, turnId: first.id, reply: { ...reply, id: randomUUID() }, usage: { inputTokens: 0, outputTokens: 0 } }))
        .reply,
    ).toBeNull();
    await store.endTurn({
      sessionId: session.id,
      turnId: waiting.id,
      reply: null,
      usage: { inputTokens: 1, outputTokens: 0 },
      memory: { summary: 'so far', through: 1 },
    });
    expect(await store.unansweredTurns()).toEqual([]);
    await store.deleteMessage(waiting.id);
    expect((await store.findSession(session.id))?.input_tokens).toBe(4);
  });
});
