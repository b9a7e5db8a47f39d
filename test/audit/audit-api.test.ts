import { AuditService } from '../../src/audit/audit-service';
import { initModels } from '../../src/db/models';
import { startService, type RunningService } from '../../src/main';
import { ScriptedProvider } from '../fakes/scripted-provider';
import { auditRows } from '../helpers/audit';
import { GENEROUS_RATE_LIMITS } from '../helpers/auth-service';
import { testEnv } from '../helpers/env';
import { jsonBody, request } from '../helpers/http';
import { LogCapture } from '../helpers/log-capture';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir';
import { registerUser, type TestUser } from '../helpers/users';

/** GET /api/v1/audit and what the API records there: API keys, users and roles, workflow changes and syncs. */
let service: RunningService;
let api: string;
let admin: TestUser;
let user: TestUser;

beforeAll(async () => {
  service = await startService({
    env: testEnv(makeTempDir(), GENEROUS_RATE_LIMITS),
    cwd: makeTempDir(),
    logDestination: new LogCapture(),
    provider: new ScriptedProvider(),
  });
  api = `http://127.0.0.1:${service.port}/api/v1`;
  admin = await registerUser(api, 'root');
  user = await registerUser(api, 'alice');
});

afterAll(async () => {
  await service.stop();
  removeTempDirs();
});

const as = (who: TestUser) => ({ authorization: `Bearer ${who.token}` });

it('records an API key created and revoked, by whom, with its prefix but never the key', async () => {
  const created = await request(`${api}/auth/api-keys`, jsonBody({ label: 'ci' }, as(user)));
  expect(created.status).toBe(201);
  const { id, key, key_prefix: prefix } = created.body.data;
  expect((await request(`${api}/auth/api-keys/${id}`, { method: 'DELETE', headers: as(user) })).status).toBe(204);
  const rows = await auditRows(api, admin.token, { actor: `user:${user.id}` }, 2);
  expect(rows.map((row) => [row.kind, row.action, row.subject])).toEqual([
    ['api_key.revoked', 'revoked', id],
    ['api_key.created', 'created', id],
  ]);
  expect(rows[1]!.details).toMatchObject({ key_prefix: prefix, label: 'ci' });
  expect(rows[0]!.actor).toEqual({ key: `user:${user.id}`, kind: 'user', name: 'alice' });
  expect(JSON.stringify(rows)).not.toContain(key);
});

it('records role and active changes of a user by an admin', async () => {
  expect((await request(`${api}/users/${user.id}`, { ...jsonBody({ role: 'admin' }, as(admin)), method: 'PATCH' })).status).toBe(200);
  expect((await request(`${api}/users/${user.id}`, { ...jsonBody({ role: 'user', is_active: false }, as(admin)), method: 'PATCH' })).status).toBe(200);
  const rows = await auditRows(api, admin.token, { kind: 'user.changed' }, 2);
  expect(rows.map((row) => [row.actor.key, row.subject, row.action])).toEqual([
    [`user:${admin.id}`, user.id, 'role:user,deactivated'],
    [`user:${admin.id}`, user.id, 'role:admin'],
  ]);
  await request(`${api}/users/${user.id}`, { ...jsonBody({ is_active: true }, as(admin)), method: 'PATCH' });
});

it('records workflow changes and a sync (not a dry run) with the names it touched', async () => {
  const workflow = { name: 'triage', system_prompt: 'Sort tickets.', tool_list: 'current_time', knowledge_base_ids: [], triggers: { keywords: ['ticket'] } };
  expect((await request(`${api}/assistant/workflows`, jsonBody(workflow, as(admin)))).status).toBe(201);
  await request(`${api}/assistant/workflows/sync`, jsonBody({ workflows: [{ ...workflow, system_prompt: 'Sort them.' }], dry_run: true }, as(admin)));
  expect((await request(`${api}/assistant/workflows/sync`, jsonBody({ workflows: [{ ...workflow, system_prompt: 'Sort them.' }] }, as(admin)))).status).toBe(
    200,
  );
  const [changed] = await auditRows(api, admin.token, { kind: 'workflow.changed' });
  expect(changed).toMatchObject({ subject: 'triage', action: 'created', actor: { key: `user:${admin.id}` } });
  const synced = await auditRows(api, admin.token, { kind: 'workflow.synced' });
  expect(synced).toHaveLength(1); // the dry run changed nothing, so it is not recorded
  expect(synced[0]!.details).toMatchObject({ created: [], updated: ['triage'], deleted: [], errors: 0 });
});

it('pages newest first with the list envelope, filters by time, and is for admins only', async () => {
  const all = await auditRows(api, admin.token, {}, 5);
  const first = await request(`${api}/audit?limit=2`, { headers: as(admin) });
  expect(first.body.data).toMatchObject({ has_more: true, total: all.length, next_cursor: expect.any(String) });
  expect(first.body.data.items.map((row: any) => row.id)).toEqual(all.slice(0, 2).map((row) => row.id));
  const second = await request(`${api}/audit?limit=2&cursor=${first.body.data.next_cursor}`, { headers: as(admin) });
  expect(second.body.data.items.map((row: any) => row.id)).toEqual(all.slice(2, 4).map((row) => row.id));
  const future = new Date(Date.now() + 60_000).toISOString();
  expect((await request(`${api}/audit?from=${encodeURIComponent(future)}`, { headers: as(admin) })).body.data).toMatchObject({
    items: [],
    total: 0,
    has_more: false,
  });
  expect((await request(`${api}/audit?to=${encodeURIComponent(future)}&kind=workflow.synced`, { headers: as(admin) })).body.data.total).toBe(1);

  expect((await request(`${api}/audit`, { headers: as(user) })).status).toBe(403);
  expect((await request(`${api}/audit`)).status).toBe(401);
  const invalid = await request(`${api}/audit?kind=nonsense&cursor=nope`, { headers: as(admin) });
  expect(invalid.status).toBe(422);
  expect(Object.keys(invalid.body.error.details.fields).sort()).toEqual(['query.kind']);
  expect((await request(`${api}/audit?cursor=nope`, { headers: as(admin) })).status).toBe(422);
});

it('forgets rows past the retention', async () => {
  const audit = new AuditService(initModels(service.storage.sequelize));
  const count = (await auditRows(api, admin.token, {}, 1)).length;
  expect(await audit.prune(0)).toBe(0); // 0 keeps everything
  expect(await audit.prune(1, new Date(Date.now() + 2 * 86_400_000))).toBe(count);
  expect((await request(`${api}/audit`, { headers: as(admin) })).body.data.total).toBe(0);
});
