import { createHash, randomUUID } from 'node:crypto';
import { ABANDONED_CLAIM_MS } from '../../src/sessions/hub';
import { startService, type RunningService } from '../../src/main';
import { ScriptedProvider } from '../fakes/scripted-provider';
import { GENEROUS_RATE_LIMITS } from '../helpers/auth-service';
import { testEnv } from '../helpers/env';
import { jsonBody, request } from '../helpers/http';
import { LogCapture } from '../helpers/log-capture';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir';
import { registerUser, type TestUser } from '../helpers/users';

let service: RunningService;
const provider = new ScriptedProvider();
let api: string;
let root: TestUser;
let ann: TestUser;
let bob: TestUser;

beforeAll(async () => {
  service = await startService({ env: testEnv(makeTempDir(), GENEROUS_RATE_LIMITS), cwd: makeTempDir(), logDestination: new LogCapture(), provider });
  api = `http://127.0.0.1:${service.port}/api/v1`;
  root = await registerUser(api, 'root');
  ann = await registerUser(api, 'ann');
  bob = await registerUser(api, 'bob');
});

afterAll(async () => {
  await service.stop();
  removeTempDirs();
});

const as = (user: TestUser, init: RequestInit = {}) => ({ ...init, headers: { ...(init.headers as object), authorization: `Bearer ${user.token}` } });
const post = (user: TestUser, path: string, body: unknown) => request(`${api}${path}`, jsonBody(body, { authorization: `Bearer ${user.token}` }));

describe('sessions REST', () => {
  it('creates a session with the documented record and a default name', async () => {
    const created = await post(ann, '/sessions', {});
    expect(created.status).toBe(201);
    expect(created.body.data).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/),
      name: expect.stringMatching(/^Session \d{4}-\d\d-\d\d \d\d:\d\d$/),
      owner_id: ann.id,
      channel: 'web',
      session_key: null,
      state: 'idle',
      active_workflow_id: null,
      config: {},
      token_counts: { input_tokens: 0, output_tokens: 0, total_tokens: 0 },
      active_tools: ['current_time', 'calculator', 'knowledge_search', 'http_fetch', 'write_file'], // agent.default_tools
      created_at: expect.any(String),
      updated_at: expect.any(String),
      archived_at: null,
      pending_confirmation: null,
    });
  });

  it('requires authentication and refuses unknown fields and workflows', async () => {
    expect((await request(`${api}/sessions`)).status).toBe(401);
    const unknown = await post(ann, '/sessions', { name: 'x', colour: 'red' });
    expect(unknown.status).toBe(422);
    const workflow = await post(ann, '/sessions', { workflow: 'support' });
    expect(workflow.status).toBe(422);
    expect(workflow.body.error.details.fields.workflow[0].code).toBe('unknown_workflow');
  });

  it('shows users only their own sessions (others: 404), admins every session', async () => {
    const mine = (await post(ann, '/sessions', { name: 'ann only' })).body.data.id;
    expect((await request(`${api}/sessions/${mine}`, as(bob))).status).toBe(404);
    expect((await request(`${api}/sessions/${mine}`, as(bob))).body.error.code).toBe('SESSION_NOT_FOUND');
    expect((await request(`${api}/sessions/${mine}/messages`, jsonBody({ text: 'hi' }, { authorization: `Bearer ${bob.token}` }))).status).toBe(404);
    expect((await request(`${api}/sessions/${mine}`, as(root))).status).toBe(200);
    const bobs = await request(`${api}/sessions`, as(bob));
    expect(bobs.body.data.items.map((s: any) => s.owner_id).filter((id: string) => id !== bob.id)).toEqual([]);
    const all = await request(`${api}/sessions?limit=100`, as(root));
    expect(all.body.data.items.map((s: any) => s.id)).toContain(mine);
  });

  it('lists newest first with a cursor, and counts the total', async () => {
    const user = await registerUser(api, 'lister');
    const ids: string[] = [];
    for (let i = 0; i < 5; i += 1) ids.push((await post(user, '/sessions', { name: `s${i}` })).body.data.id);
    const first = await request(`${api}/sessions?limit=2`, as(user));
    expect(first.body.data).toMatchObject({ has_more: true, total: 5 });
    expect(first.body.data.items.map((s: any) => s.id)).toEqual([ids[4], ids[3]]);
    const second = await request(`${api}/sessions?limit=2&cursor=${first.body.data.next_cursor}`, as(user));
    expect(second.body.data.items.map((s: any) => s.id)).toEqual([ids[2], ids[1]]);
    const last = await request(`${api}/sessions?limit=2&cursor=${second.body.data.next_cursor}`, as(user));
    expect(last.body.data).toMatchObject({ has_more: false, next_cursor: null });
    expect((await request(`${api}/sessions?cursor=garbage`, as(user))).status).toBe(422);
    expect((await request(`${api}/sessions?limit=101`, as(user))).status).toBe(422);
  });

  it('renames, archives (hidden from the list, 409 on new messages), and restores', async () => {
    const id = (await post(ann, '/sessions', { name: 'old' })).body.data.id;
    const renamed = await request(`${api}/sessions/${id}`, {
      ...jsonBody({ name: 'new', config: { max_steps: 3 } }, { authorization: `Bearer ${ann.token}` }),
      method: 'PATCH',
    });
    expect(renamed.body.data).toMatchObject({ name: 'new', config: { max_steps: 3 } });
    const archived = await request(`${api}/sessions/${id}`, as(ann, { method: 'DELETE' }));
    expect(archived.body.data.archived_at).not.toBeNull();
    const listed = await request(`${api}/sessions?limit=100`, as(ann));
    expect(listed.body.data.items.map((s: any) => s.id)).not.toContain(id);
    const withArchived = await request(`${api}/sessions?limit=100&include_archived=true`, as(ann));
    expect(withArchived.body.data.items.map((s: any) => s.id)).toContain(id);
    const refused = await post(ann, `/sessions/${id}/messages`, { text: 'hello?' });
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe('CONFLICT');
    const restored = await request(`${api}/sessions/${id}/restore`, as(ann, { method: 'POST' }));
    expect(restored.body.data.archived_at).toBeNull();
  });

  it('keeps history oldest first with a cursor, clears it keeping the newest, counts tokens', async () => {
    const id = (await post(ann, '/sessions', {})).body.data.id;
    for (const text of ['one', 'two', 'three']) {
      const done = await post(ann, `/sessions/${id}/messages?sync=true`, { text });
      expect(done.status).toBe(200);
    }
    const page1 = await request(`${api}/sessions/${id}/messages?limit=4`, as(ann));
    expect(page1.body.data.items.map((m: any) => [m.role, m.content])).toEqual([
      ['user', 'one'],
      ['assistant', 'Hello there, friend.'],
      ['user', 'two'],
      ['assistant', 'Hello there, friend.'],
    ]);
    expect(page1.body.data).toMatchObject({ has_more: true, total: 6 });
    const page2 = await request(`${api}/sessions/${id}/messages?limit=4&cursor=${page1.body.data.next_cursor}`, as(ann));
    expect(page2.body.data.items.map((m: any) => m.content)).toEqual(['three', 'Hello there, friend.']);
    expect(page2.body.data.next_cursor).toBeNull();
    const session = await request(`${api}/sessions/${id}`, as(ann));
    expect(session.body.data.token_counts).toEqual({ input_tokens: 33, output_tokens: 12, total_tokens: 45 });

    const cleared = await request(`${api}/sessions/${id}/messages`, {
      ...jsonBody({ keep_last: 2 }, { authorization: `Bearer ${ann.token}` }),
      method: 'DELETE',
    });
    expect(cleared.body.data).toEqual({ deleted: 4, kept: 2 });
    const left = await request(`${api}/sessions/${id}/messages`, as(ann));
    expect(left.body.data.items.map((m: any) => m.content)).toEqual(['three', 'Hello there, friend.']);
    const all = await request(`${api}/sessions/${id}/messages`, as(ann, { method: 'DELETE' }));
    expect(all.body.data).toEqual({ deleted: 2, kept: 0 });
  });

  it('validates messages: text or content, 1 to 65,536 characters, a known mode', async () => {
    const id = (await post(ann, '/sessions', {})).body.data.id;
    const cases: [unknown, string][] = [
      [{}, 'text'],
      [{ text: '' }, 'text'],
      [{ text: 'x'.repeat(65_537) }, 'text'],
      [{ text: 'ok', mode: 'turbo' }, 'mode'],
    ];
    for (const [body, field] of cases) {
      const response = await post(ann, `/sessions/${id}/messages`, body);
      expect({ body: JSON.stringify(body).slice(0, 40), status: response.status, fields: Object.keys(response.body.error.details.fields) }).toEqual({
        body: JSON.stringify(body).slice(0, 40),
        status: 422,
        fields: [field],
      });
    }
    expect((await post(ann, `/sessions/${id}/messages`, { content: 'y'.repeat(65_536) })).status).toBe(202);
  });

  it('cancel with no running turn is a 409 CONFLICT', async () => {
    const id = (await post(ann, '/sessions', {})).body.data.id;
    const response = await request(`${api}/sessions/${id}/cancel`, as(ann, { method: 'POST' }));
    expect(response.status).toBe(409);
    expect(response.body.error.code).toBe('CONFLICT');
  });
});

describe('Idempotency-Key on POST /sessions/{id}/messages', () => {
  const send = (id: string, key: string | null, text: string, query = '') =>
    request(
      `${api}/sessions/${id}/messages${query}`,
      jsonBody({ text }, { authorization: `Bearer ${ann.token}`, ...(key === null ? {} : { 'idempotency-key': key }) }),
    );
  const userTexts = async (id: string) =>
    ((await request(`${api}/sessions/${id}/messages?limit=100`, as(ann))).body.data.items as any[]).filter((m) => m.role === 'user').map((m) => m.content);
  const idle = async (id: string) => {
    for (let i = 0; i < 250 && (await request(`${api}/sessions/${id}`, as(ann))).body.data.state !== 'idle'; i++)
      await new Promise((resolve) => setTimeout(resolve, 20));
  };

  afterEach(() => {
    provider.pauseBefore = null;
    provider.release();
  });

  it('a retried POST answers the message the first one stored and starts no second turn', async () => {
    const id = (await post(ann, '/sessions', {})).body.data.id;
    const requests = provider.requests.length;
    const first = await send(id, 'retry-1', 'only once please');
    const again = await send(id, 'retry-1', 'only once please');
    expect([first.status, again.status]).toEqual([202, 202]);
    expect(again.body.data).toEqual(first.body.data);
    await idle(id);
    expect(await userTexts(id)).toEqual(['only once please']);
    expect(provider.requests.length).toBe(requests + 1);
    // The same key on another session is another message.
    const other = (await post(ann, '/sessions', {})).body.data.id;
    expect((await send(other, 'retry-1', 'elsewhere')).body.data.id).not.toBe(first.body.data.id);
  });

  it('a key refused with TURN_IN_PROGRESS may be used again once the turn is over', async () => {
    const id = (await post(ann, '/sessions', {})).body.data.id;
    provider.pauseBefore = 1;
    expect((await send(id, null, 'hold on')).status).toBe(202);
    await provider.paused();
    const busy = await send(id, 'later-1', 'after that');
    expect([busy.status, busy.body.error.code]).toEqual([409, 'TURN_IN_PROGRESS']);
    provider.pauseBefore = null;
    provider.release();
    await idle(id);
    expect((await send(id, 'later-1', 'after that')).status).toBe(202);
    await idle(id);
    expect(await userTexts(id)).toEqual(['hold on', 'after that']);
  });

  it('sync: a retry while the turn runs, or soon after (its frames still kept), gets the same done', async () => {
    const id = (await post(ann, '/sessions', {})).body.data.id;
    provider.pauseBefore = 1;
    const first = send(id, 'sync-1', 'wait for me', '?sync=true');
    await provider.paused();
    const retry = send(id, 'sync-1', 'wait for me', '?sync=true');
    await new Promise((resolve) => setTimeout(resolve, 100));
    provider.pauseBefore = null;
    provider.release();
    const [a, b] = await Promise.all([first, retry]);
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(b.body.data.message_id).toBe(a.body.data.message_id);
    const late = await send(id, 'sync-1', 'wait for me', '?sync=true');
    expect([late.status, late.body.data.message_id]).toEqual([200, a.body.data.message_id]);
    expect(await userTexts(id)).toEqual(['wait for me']);
  });

  it('a key whose first request died before its message was stored is taken over by a retry after a while; one stored is never stored again', async () => {
    const id = (await post(ann, '/sessions', {})).body.data.id;
    const externalId = `${id}:${createHash('sha256').update('orphan-1').digest('base64url')}`;
    const { sequelize } = service.storage;
    const claimedAgo = (ageMs: number) => new Date(Date.now() - ageMs);
    // The first request claimed the key and died (its process killed, the database gone) before storing.
    await sequelize.query('INSERT INTO inbound_events (channel, external_id, session_id, message_id, created_at) VALUES (?, ?, ?, ?, ?)', {
      replacements: ['web', externalId, id, randomUUID(), claimedAgo(1_000)],
    });
    const early = await send(id, 'orphan-1', 'lost once');
    expect([early.status, early.body.error.code]).toEqual([409, 'CONFLICT']); // it may still be on its way
    await sequelize.query('UPDATE inbound_events SET created_at = ? WHERE external_id = ?', {
      replacements: [claimedAgo(ABANDONED_CLAIM_MS + 1_000), externalId],
    });
    const late = await send(id, 'orphan-1', 'lost once');
    expect(late.status).toBe(202);
    await idle(id);
    // Long after, the key still names the message that was stored: no second copy.
    await sequelize.query('UPDATE inbound_events SET created_at = ? WHERE external_id = ?', {
      replacements: [claimedAgo(ABANDONED_CLAIM_MS + 1_000), externalId],
    });
    const again = await send(id, 'orphan-1', 'lost once');
    expect([again.status, again.body.data.id]).toEqual([202, late.body.data.id]);
    await idle(id);
    expect(await userTexts(id)).toEqual(['lost once']);
  });

  it('refuses a key that is empty, too long or not printable ASCII (422 naming the header)', async () => {
    const id = (await post(ann, '/sessions', {})).body.data.id;
    for (const key of ['has space', 'x'.repeat(256), 'caf\u00e9']) {
      const response = await request(`${api}/sessions/${id}/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${ann.token}`, 'idempotency-key': encodeURI(key) === key ? key : 'bad key' },
        body: JSON.stringify({ text: 'x' }),
      });
      expect([response.status, Object.keys(response.body.error.details.fields)]).toEqual([422, ['header.idempotency-key']]);
    }
  });
});
