import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { createToolRegistry } from '../../src/agent/tools';
import { loadConfig } from '../../src/config';
import { openDatabase, type Database } from '../../src/db/database';
import { migrateToLatest } from '../../src/db/migrator';
import { initModels, type Models } from '../../src/db/models';
import { createKnowledge, KnowledgeService } from '../../src/knowledge';
import { createLogger } from '../../src/logs/logger';
import { testEnv } from '../helpers/env';
import { LogCapture } from '../helpers/log-capture';
import { createTestPostgresDatabase, type TestPostgresDatabase } from '../helpers/postgres';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir';

const logger = createLogger({ level: 'warn', format: 'json', name: 'test', destination: new LogCapture() });

const backends: [string, () => Promise<{ url: string | null; cleanup: () => Promise<void> }>][] = [
  ['SQLite', async () => ({ url: null, cleanup: async () => undefined })],
  [
    'PostgreSQL',
    async () => {
      const pg: TestPostgresDatabase = await createTestPostgresDatabase();
      return { url: pg.url, cleanup: () => pg.drop() };
    },
  ],
];

afterAll(removeTempDirs);

describe.each(backends)('knowledge storage and retrieval on %s', (_name, setup) => {
  let backend: Awaited<ReturnType<(typeof backends)[number][1]>>;
  let database: Database;
  let models: Models;
  let knowledge: KnowledgeService;
  const dataDir = makeTempDir();

  const open = async () => {
    const db = await openDatabase({ data_dir: dataDir, database: { url: backend.url, pool_max: 5 } }, logger);
    await migrateToLatest(db, logger);
    return db;
  };

  beforeAll(async () => {
    backend = await setup();
    database = await open();
    models = initModels(database.sequelize);
    knowledge = createKnowledge(database, models);
  });

  afterAll(async () => {
    await database.close();
    await backend.cleanup();
  });

  const add = (collection: string, title: string, text: string) =>
    knowledge.addDocument(collection, { title, source: null, mediaType: 'text/plain', sizeBytes: text.length, text });

  it('resolves ids and names to ids, and lists the unknown ones', async () => {
    const alpha = await knowledge.createCollection('alpha-docs');
    const beta = await knowledge.createCollection('beta-docs');
    const ghost = randomUUID();
    expect(await knowledge.resolve(['beta-docs', alpha.id.toUpperCase(), 'nope', ghost, alpha.id])).toEqual({
      ids: [beta.id, alpha.id],
      missing: ['nope', ghost],
    });
    expect(await knowledge.resolve([])).toEqual({ ids: [], missing: [] });
  });

  it('searches only the collections it is given', async () => {
    const open = await knowledge.createCollection('public-faq');
    const secret = await knowledge.createCollection('secret-faq');
    await add(open.id, 'Opening hours', 'The office opens at nine and closes at five on weekdays.');
    await add(secret.id, 'Vault', 'The vault combination zanzibar is changed every quarter.');
    expect(await knowledge.search([open.id], 'zanzibar combination', 5)).toEqual([]);
    const hits = await knowledge.search([open.id, secret.id], 'zanzibar combination', 5);
    expect(hits.map((hit) => hit.collectionId)).toEqual([secret.id]);
    expect(hits[0]).toMatchObject({ title: 'Vault', text: expect.stringContaining('zanzibar'), score: expect.any(Number) });
    expect(await knowledge.search([], 'zanzibar', 5)).toEqual([]);
  });

  it('ranks the passage with the query terms first, and forgets deleted documents', async () => {
    const collection = await knowledge.createCollection('ranking');
    await add(collection.id, 'Coffee', 'The coffee machine is on the second floor next to the printer.');
    const target = await add(collection.id, 'Turbines', 'Turbine blades need an inspection every 400 flight hours; inspection findings go to the log.');
    await add(collection.id, 'Parking', 'Parking is free for visitors; an inspection sticker is needed.');
    const hits = await knowledge.retrieve([collection.id], 'turbine blade inspection hours', 3);
    expect(hits[0]).toMatchObject({ documentId: target.id, title: 'Turbines' });
    expect(hits.length).toBeGreaterThan(1);
    expect(hits[0].score).toBeGreaterThan(hits[1].score);

    await knowledge.deleteDocument(collection.id, target.id);
    const after = await knowledge.search([collection.id], 'turbine blades', 3);
    expect(after.map((hit) => hit.documentId)).not.toContain(target.id);
    expect(after).toEqual([]);
    await expect(knowledge.document(collection.id, target.id)).rejects.toMatchObject({ code: 'DOCUMENT_NOT_FOUND' });
  });

  it('loads the stored index on a fresh instance without reading the documents again', async () => {
    const collection = await knowledge.createCollection('persisted');
    const document = await add(collection.id, 'Glossary', 'A quokka is a small wallaby found on Rottnest Island.');
    // Rewrite the stored chunk text: an index rebuilt from chunks would no longer find "quokka".
    await database.sequelize.query(`UPDATE knowledge_chunks SET text = 'rewritten' WHERE document_id = '${document.id}'`);
    const fresh = createKnowledge(database, models);
    const hits = await fresh.search([collection.id], 'quokka', 5);
    expect(hits).toEqual([expect.objectContaining({ documentId: document.id, text: 'rewritten' })]);
    expect(fresh.indexes.loads).toBe(1);
    await fresh.search([collection.id], 'wallaby', 5);
    expect(fresh.indexes.loads).toBe(1); // unchanged revision: served from memory
  });

  it('notices another process adding a document (revision moved) and reloads that index', async () => {
    const collection = await knowledge.createCollection('shared');
    const other = createKnowledge(database, models);
    expect(await knowledge.search([collection.id], 'platypus', 5)).toEqual([]);
    await other.addDocument(collection.id, { title: 'Animals', source: null, mediaType: 'text/plain', sizeBytes: 10, text: 'The platypus lays eggs.' });
    expect((await knowledge.search([collection.id], 'platypus', 5)).map((hit) => hit.title)).toEqual(['Animals']);
  });

  it('keeps every document of concurrent uploads to one collection', async () => {
    const collection = await knowledge.createCollection('concurrent');
    const words = ['amber', 'basalt', 'cobalt', 'dolomite', 'emerald', 'feldspar'];
    await Promise.all(words.map((word) => add(collection.id, word, `This note is about ${word} only.`)));
    for (const word of words) expect((await knowledge.search([collection.id], word, 5)).map((hit) => hit.title)).toEqual([word]);
  });

  it("gives the knowledge_search tool only the session workflow's collections", async () => {
    const listed = await knowledge.createCollection('runbooks');
    const unlisted = await knowledge.createCollection('hr-private');
    await add(listed.id, 'Disk full', 'When the disk is full, rotate the logs with logrotate and page the on-call.');
    await add(unlisted.id, 'Salaries', 'Salary bands and disk quotas for managers are reviewed in March.');
    const workflowId = randomUUID();
    await models.Workflow.create({
      id: workflowId,
      name: 'oncall',
      description: '',
      system_prompt: 'You help the on-call engineer.',
      tool_list: 'knowledge_search',
      knowledge_base_ids: ['runbooks', randomUUID()],
      triggers: { keywords: [], regex: [], contact_tags: [] },
      binding_channels: [],
    });
    const sessionId = randomUUID();
    await models.Session.create({
      id: sessionId,
      name: 'test',
      owner_id: 'someone',
      channel: 'web',
      session_key: null,
      active_workflow_id: workflowId,
      config: {},
      active_tools: [],
      current_turn_id: null,
      turn_phase: null,
      archived_at: null,
      tool_state: null,
      pending_confirmation: null,
    });
    expect(await knowledge.collectionsFor(sessionId)).toEqual([listed.id]);

    const { config } = loadConfig({ env: testEnv(dataDir), cwd: dataDir });
    const registry = createToolRegistry(config.tools, { workspaceDir: path.join(dataDir, 'workspace'), knowledge });
    const tool = registry.get('knowledge_search')!;
    expect(tool.availability()).toEqual({ ok: true });
    const output = (await tool.run({ query: 'disk quotas salary', top_k: 5 }, { sessionId, signal: new AbortController().signal })) as {
      results: { collection_id: string; title: string }[];
    };
    expect(output.results.length).toBeGreaterThan(0);
    expect(output.results.every((result) => result.collection_id === listed.id)).toBe(true);
    expect(output.results.map((result) => result.title)).not.toContain('Salaries');

    const loose = randomUUID();
    await models.Session.create({
      id: loose,
      name: 'no workflow',
      owner_id: 'someone',
      channel: 'web',
      session_key: null,
      active_workflow_id: null,
      config: {},
      active_tools: [],
      current_turn_id: null,
      turn_phase: null,
      archived_at: null,
      tool_state: null,
      pending_confirmation: null,
    });
    expect(await knowledge.collectionsFor(loose)).toEqual([]);
    await expect(tool.run({ query: 'disk', top_k: 5 }, { sessionId: loose, signal: new AbortController().signal })).rejects.toThrow(/no knowledge collections/);
  });
});
