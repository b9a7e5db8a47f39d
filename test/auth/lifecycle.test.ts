import { QueryTypes } from 'sequelize';
import { createMigrator, migrateToLatest } from '../../src/db/migrator';
import { MIGRATIONS } from '../../src/db/migrations';
import { bearer, newUser, register, startAuthService, type AuthService } from '../helpers/auth-service';
import { jsonBody, request } from '../helpers/http';
import { createTestPostgresDatabase, type TestPostgresDatabase } from '../helpers/postgres';
import { removeTempDirs } from '../helpers/temp-dir';

/** The whole auth lifecycle on both databases: dialect differences (dates, booleans, ON CONFLICT, cascades). */
const backends: [string, boolean][] = [
  ['SQLite', false],
  ['PostgreSQL', true],
];

afterAll(removeTempDirs);

describe.each(backends)('auth lifecycle on %s', (_name, usePostgres) => {
  let pg: TestPostgresDatabase | undefined;
  let hub: AuthService;

  beforeAll(async () => {
    pg = usePostgres ? await createTestPostgresDatabase() : undefined;
    hub = await startAuthService({ databaseUrl: pg?.url });
  });

  afterAll(async () => {
    await hub.close();
    await pg?.drop();
  });

  it('register, log in, use an API key, revoke it, manage users, delete with cascade', async () => {
    const adminBody = newUser('admin');
    const admin = await register(hub.api, adminBody);
    expect(admin.body.data.user.role).toBe('admin');
    const login = await request(`${hub.api}/auth/login`, jsonBody({ username: adminBody.email, password: adminBody.password }));
    expect(login.status).toBe(200);

    const user = await register(hub.api);
    const userToken = user.body.data.access_token;
    const created = await request(`${hub.api}/auth/api-keys`, jsonBody({ label: 'script', expires_in_days: 30 }, { authorization: `Bearer ${userToken}` }));
    expect(created.status).toBe(201);
    const key = created.body.data.key;
    expect((await request(`${hub.api}/auth/me`, { headers: { 'x-api-key': key } })).body.data.id).toBe(user.body.data.user.id);
    const listed = await request(`${hub.api}/auth/api-keys`, bearer(userToken));
    expect(listed.body.data.items[0].last_used_at).toEqual(expect.stringMatching(/Z$/));
    expect(Date.parse(listed.body.data.items[0].expires_at)).toBeGreaterThan(Date.now() + 29 * 86_400_000);

    const adminToken = admin.body.data.access_token;
    const patch = (body: unknown) =>
      request(`${hub.api}/users/${user.body.data.user.id}`, {
        method: 'PATCH',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${adminToken}` },
        body: JSON.stringify(body),
      });
    expect((await patch({ is_active: false })).body.data.is_active).toBe(false);
    expect((await request(`${hub.api}/auth/me`, bearer(key))).status).toBe(401);
    expect((await patch({ is_active: true, role: 'admin' })).body.data).toMatchObject({ is_active: true, role: 'admin' });
    expect((await request(`${hub.api}/users`, bearer(key))).status).toBe(200);

    expect((await request(`${hub.api}/auth/api-keys/${created.body.data.id}`, { method: 'DELETE', ...bearer(userToken) })).status).toBe(204);
    expect((await request(`${hub.api}/auth/me`, bearer(key))).status).toBe(401);

    expect((await request(`${hub.api}/users/${user.body.data.user.id}`, { method: 'DELETE', ...bearer(adminToken) })).status).toBe(204);
    const count = async (table: string) =>
      (
        await hub.database.sequelize.query<{ n: number | string }>(`SELECT COUNT(*) AS n FROM ${table} WHERE user_id = :id`, {
          replacements: { id: user.body.data.user.id },
          type: QueryTypes.SELECT,
        })
      )[0]!.n;
    expect(Number(await count('api_keys'))).toBe(0);
    expect(Number(await count('refresh_tokens'))).toBe(0);
  });

  it('logout-all ends every session', async () => {
    const registered = await register(hub.api);
    await new Promise((resolve) => setTimeout(resolve, 1100)); // iat has whole seconds
    expect((await request(`${hub.api}/auth/logout-all`, { method: 'POST', ...bearer(registered.body.data.access_token) })).status).toBe(204);
    expect((await request(`${hub.api}/auth/me`, bearer(registered.body.data.access_token))).status).toBe(401);
    expect((await request(`${hub.api}/auth/refresh`, jsonBody({ refresh_token: registered.body.data.refresh_token }))).status).toBe(401);
  });

  it('the auth migration rolls back and forward', async () => {
    const migrator = createMigrator(hub.database);
    await migrator.down({ to: 0 });
    const tables = async () => (await hub.database.sequelize.getQueryInterface().showAllTables()).map(String).sort();
    expect(await tables()).not.toContain('users');
    expect(await migrateToLatest(hub.database)).toEqual(MIGRATIONS.map((migration) => migration.name));
    expect(await tables()).toEqual(expect.arrayContaining(['api_keys', 'auth_first_admin', 'refresh_tokens', 'saml_assertions', 'saml_requests', 'users']));
  });
});
