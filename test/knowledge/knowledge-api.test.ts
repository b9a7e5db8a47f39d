import http from 'node:http';
import { Sequelize } from 'sequelize';
import path from 'node:path';
import { startService, type RunningService } from '../../src/main';
import { SQLITE_FILE_NAME } from '../../src/db/database';
import { KNOWLEDGE_DEFAULTS } from '../../src/knowledge';
import { ScriptedProvider } from '../fakes/scripted-provider';
import { GENEROUS_RATE_LIMITS } from '../helpers/auth-service';
import { testEnv } from '../helpers/env';
import { jsonBody, request } from '../helpers/http';
import { LogCapture } from '../helpers/log-capture';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir';
import { registerUser, type TestUser } from '../helpers/users';
import { makePdf } from './pdf';

const dataDir = makeTempDir();
const cwd = makeTempDir();
let service: RunningService;
let api: string;
let admin: TestUser;
let user: TestUser;

const start = async () => {
  service = await startService({ env: testEnv(dataDir, GENEROUS_RATE_LIMITS), cwd, logDestination: new LogCapture(), provider: new ScriptedProvider() });
  api = `http://127.0.0.1:${service.port}/api/v1`;
};

beforeAll(async () => {
  await start();
  admin = await registerUser(api, 'root');
  user = await registerUser(api, 'ann');
});

afterAll(async () => {
  await service.stop();
  removeTempDirs();
});

const auth = (who: TestUser) => ({ authorization: `Bearer ${who.token}` });
const post = (who: TestUser, route: string, body: unknown) => request(`${api}${route}`, jsonBody(body, auth(who)));
const upload = (who: TestUser, collection: string, name: string, content: Buffer | string, type: string, title?: string) => {
  const form = new FormData();
  form.append('file', new Blob([content], { type }), name);
  if (title) form.append('title', title);
  return request(`${api}/knowledge/collections/${collection}/documents`, { method: 'POST', headers: auth(who), body: form });
};
const search = (who: TestUser, collection: string, query: string, topK = 5) => post(who, `/knowledge/collections/${collection}/search`, { query, top_k: topK });

describe('knowledge REST', () => {
  let handbook: string;

  it('creates collections (admin only, unique names) and lists them for any user', async () => {
    const created = await post(admin, '/knowledge/collections', { name: 'handbook' });
    expect(created.status).toBe(201);
    expect(created.body.data).toEqual({ id: expect.stringMatching(/^[0-9a-f-]{36}$/), name: 'handbook', document_count: 0, created_at: expect.any(String) });
    handbook = created.body.data.id;
    expect((await post(admin, '/knowledge/collections', { name: 'handbook' })).body.error.code).toBe('CONFLICT');
    expect((await post(user, '/knowledge/collections', { name: 'mine' })).status).toBe(403);
    const invalid = await post(admin, '/knowledge/collections', { name: '' });
    expect(invalid.status).toBe(422);
    expect(invalid.body.error.details.fields.name).toBeDefined();
    const listed = await request(`${api}/knowledge/collections`, { headers: auth(user) });
    expect(listed.body.data).toMatchObject({ items: [{ id: handbook, name: 'handbook' }], has_more: false, total: 1, next_cursor: null });
  });

  it('ingests txt, md, html and pdf uploads and a JSON document, each searchable', async () => {
    const txt = await upload(
      admin,
      handbook,
      'holidays.txt',
      'Staff get twenty-five vacation days a year.\n\nUnused vacation days expire in March.',
      'text/plain',
    );
    expect(txt.status).toBe(201);
    expect(txt.body.data).toMatchObject({ collection_id: handbook, title: 'holidays.txt', source: 'holidays.txt', media_type: 'text/plain', chunk_count: 1 });
    const md = await upload(
      admin,
      handbook,
      'expenses.md',
      '# Expenses\n\nSubmit **receipts** within thirty days through the finance portal.',
      'text/markdown',
      'Expense policy',
    );
    expect(md.body.data).toMatchObject({ title: 'Expense policy', media_type: 'text/markdown' });
    const html = await upload(
      admin,
      handbook,
      'security.html',
      '<html><head><title>x</title><script>var hidden = "javascriptonly";</script></head><body><h1>Badges</h1><p>Wear your <b>badge</b> visibly inside the datacenter.</p></body></html>',
      'text/html',
    );
    expect(html.body.data).toMatchObject({ media_type: 'text/html' });
    const pdf = await upload(
      admin,
      handbook,
      'turbines.pdf',
      makePdf(['Turbine blades need inspection every 400 hours.', 'Record findings in the maintenance log.']),
      'application/octet-stream',
    );
    expect(pdf.status).toBe(201);
    expect(pdf.body.data).toMatchObject({ media_type: 'application/pdf', source: 'turbines.pdf' });
    const json = await post(admin, `/knowledge/collections/${handbook}/documents`, { title: 'Parking', text: 'Visitor parking is behind building C.' });
    expect(json.status).toBe(201);
    expect(json.body.data).toMatchObject({ title: 'Parking', source: null, media_type: 'text/plain' });

    const expectTop = async (query: string, title: string) => {
      const found = await search(user, handbook, query);
      expect(found.status).toBe(200);
      expect(found.body.data.results[0]).toMatchObject({ title, collection_id: handbook, score: expect.any(Number) });
      return found.body.data.results[0].text as string;
    };
    expect(await expectTop('vacation days', 'holidays.txt')).toContain('twenty-five vacation days');
    expect(await expectTop('receipts finance', 'Expense policy')).toContain('receipts');
    expect(await expectTop('badge datacenter', 'security.html')).toContain('Wear your badge visibly');
    expect(await expectTop('turbine inspection', 'turbines.pdf')).toContain('Turbine blades need inspection every 400 hours.');
    expect(await expectTop('visitor parking', 'Parking')).toContain('building C');
    expect((await search(user, handbook, 'javascriptonly')).body.data.results).toEqual([]); // scripts are not text
    expect((await search(user, 'handbook', 'vacation')).body.data.results[0].title).toBe('holidays.txt'); // by name too
    const listed = await request(`${api}/knowledge/collections`, { headers: auth(user) });
    expect(listed.body.data.items[0].document_count).toBe(5);
  });

  it('refuses other types with 415 naming the accepted ones, and bad input with 422', async () => {
    const png = await upload(admin, handbook, 'photo.png', Buffer.from([0x89, 0x50, 0x4e, 0x47]), 'image/png');
    expect(png.status).toBe(415);
    expect(png.body.error.code).toBe('UNSUPPORTED_MEDIA_TYPE');
    expect(png.body.error.details.accepted).toEqual(['txt', 'md', 'html', 'pdf']);
    expect(png.body.error.message).toMatch(/txt, md, html, pdf/);
    const plain = await request(`${api}/knowledge/collections/${handbook}/documents`, {
      method: 'POST',
      headers: { ...auth(admin), 'content-type': 'text/plain' },
      body: 'just text',
    });
    expect(plain.status).toBe(415);
    const fakePdf = await upload(admin, handbook, 'fake.pdf', 'not a pdf at all', 'application/pdf');
    expect(fakePdf.status).toBe(422);
    expect(fakePdf.body.error.details.fields.file[0].code).toBe('unreadable_document');
    const brokenPdf = await upload(admin, handbook, 'broken.pdf', '%PDF-1.4\ngarbage', 'application/pdf');
    expect(brokenPdf.status).toBe(422);
    const empty = await upload(admin, handbook, 'empty.txt', '   \n  ', 'text/plain');
    expect(empty.status).toBe(422);
    const binary = await upload(admin, handbook, 'binary.txt', Buffer.from([1, 0, 2, 0]), 'text/plain');
    expect(binary.status).toBe(422);
    const noFile = new FormData();
    noFile.append('title', 'only a title');
    const missing = await request(`${api}/knowledge/collections/${handbook}/documents`, { method: 'POST', headers: auth(admin), body: noFile });
    expect(missing.status).toBe(422);
    expect(missing.body.error.details.fields.file).toBeDefined();
    const blank = await post(admin, `/knowledge/collections/${handbook}/documents`, { title: 'x' });
    expect(blank.status).toBe(422);
    expect(blank.body.error.details.fields.text).toBeDefined();
    expect((await post(admin, `/knowledge/collections/${handbook}/documents`, { title: 'x', text: '  ' })).status).toBe(422);
    expect((await search(user, handbook, '')).status).toBe(422);
    expect((await search(user, handbook, 'x', 0)).status).toBe(422);
    expect((await upload(user, handbook, 'a.txt', 'hello', 'text/plain')).status).toBe(403);
    const unknown = await upload(admin, 'no-such-collection', 'a.txt', 'hello', 'text/plain');
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('COLLECTION_NOT_FOUND');
    // None of the refused uploads was stored.
    const listed = await request(`${api}/knowledge/collections`, { headers: auth(user) });
    expect(listed.body.data.items[0].document_count).toBe(5);
  });

  it('refuses a file over 20 MiB with 413 while it streams, and stores nothing', async () => {
    const boundary = 'knowledge-test-boundary';
    const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="huge.txt"\r\nContent-Type: text/plain\r\n\r\n`);
    const piece = Buffer.alloc(1024 * 1024, 'a'); // one reused MiB: the 21 MiB body never exists in memory
    const status = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const outgoing = http.request(`${api}/knowledge/collections/${handbook}/documents`, {
        method: 'POST',
        headers: { ...auth(admin), 'content-type': `multipart/form-data; boundary=${boundary}`, 'transfer-encoding': 'chunked' },
      });
      outgoing.on('response', (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (body += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
      });
      outgoing.on('error', reject);
      outgoing.write(head);
      let sent = 0;
      const pump = () => {
        while (sent < KNOWLEDGE_DEFAULTS.maxFileBytes / piece.length + 1) {
          sent += 1;
          if (!outgoing.write(piece)) return void outgoing.once('drain', pump);
        }
        outgoing.end(`\r\n--${boundary}--\r\n`);
      };
      pump();
    });
    expect(status.status).toBe(413);
    expect(JSON.parse(status.body).error).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', details: { limit_bytes: KNOWLEDGE_DEFAULTS.maxFileBytes } });

    // A declared Content-Length over the limit is refused before any of the body is read.
    const declared = await upload(admin, handbook, 'declared.txt', Buffer.alloc(KNOWLEDGE_DEFAULTS.maxFileBytes + 1, 'b'), 'text/plain');
    expect(declared.status).toBe(413);
    const listed = await request(`${api}/knowledge/collections`, { headers: auth(user) });
    expect(listed.body.data.items[0].document_count).toBe(5);
  });

  it('gets and deletes a document; a deleted one is no longer found', async () => {
    const added = await post(admin, `/knowledge/collections/${handbook}/documents`, { title: 'Cafeteria', text: 'The cafeteria serves lasagne on Thursdays.' });
    const id = added.body.data.id;
    const fetched = await request(`${api}/knowledge/collections/${handbook}/documents/${id}`, { headers: auth(user) });
    expect(fetched.body.data).toEqual(added.body.data);
    expect((await search(user, handbook, 'lasagne')).body.data.results.map((hit: any) => hit.document_id)).toEqual([id]);
    expect((await request(`${api}/knowledge/collections/${handbook}/documents/${id}`, { method: 'DELETE', headers: auth(user) })).status).toBe(403);
    const deleted = await request(`${api}/knowledge/collections/${handbook}/documents/${id}`, { method: 'DELETE', headers: auth(admin) });
    expect(deleted.status).toBe(200);
    expect((await search(user, handbook, 'lasagne')).body.data.results).toEqual([]);
    const gone = await request(`${api}/knowledge/collections/${handbook}/documents/${id}`, { headers: auth(user) });
    expect(gone.status).toBe(404);
    expect(gone.body.error.code).toBe('DOCUMENT_NOT_FOUND');
  });

  it('searches after a restart from the stored index, without re-reading the documents', async () => {
    await service.stop();
    // Rewrite every stored chunk text while the hub is down: an index rebuilt from the documents at
    // start would no longer find "vacation"; the stored one still does, and returns the new text.
    const sequelize = new Sequelize({ dialect: 'sqlite', storage: path.join(dataDir, SQLITE_FILE_NAME), logging: false });
    await sequelize.query("UPDATE knowledge_chunks SET text = 'rewritten while stopped'");
    await sequelize.close();
    await start();
    const found = await search(user, handbook, 'vacation days');
    expect(found.body.data.results[0]).toMatchObject({ title: 'holidays.txt', text: 'rewritten while stopped' });
  });

  it('describes the endpoints in the OpenAPI document', async () => {
    const document = (await request(`${api}/openapi.json`)).body;
    const uploadPath = document.paths['/api/v1/knowledge/collections/{id}/documents'].post;
    expect(Object.keys(uploadPath.requestBody.content).sort()).toEqual(['application/json', 'multipart/form-data']);
    expect(uploadPath.responses['413']).toBeDefined();
    expect(uploadPath.responses['415']).toBeDefined();
    expect(document.paths['/api/v1/knowledge/collections/{id}/search'].post).toBeDefined();
  });
});
