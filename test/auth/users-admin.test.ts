import { bearer, newUser, register, startAuthService, type AuthService } from '../helpers/auth-service';
import { jsonBody, request } from '../helpers/http';
import { removeTempDirs } from '../helpers/temp-dir';

let hub: AuthService;
let admin: { id: string; token: string };

beforeAll(async () => {
  hub = await startAuthService();
  const registered = await register(hub.api);
  admin = { id: registered.body.data.user.id, token: registered.body.data.access_token };
});

afterAll(async () => {
  await hub.close();
  removeTempDirs();
});

function asAdmin(init: RequestInit = {}): RequestInit {
  return { ...init, headers: { ...(init.headers as Record<string, string>), authorization: `Bearer ${admin.token}` } };
}

function patch(id: string, body: unknown, token = admin.token) {
  return request(`${hub.api}/users/${id}`, {
    method: 'PATCH',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify(body),
  });
}

describe('admin user management', () => {
  it('is forbidden (403) to users and unauthorized (401) to anonymous callers', async () => {
    const user = await register(hub.api);
    const listed = await request(`${hub.api}/users`, bearer(user.body.data.access_token));
    expect(listed.status).toBe(403);
    expect(listed.body.error.code).toBe('FORBIDDEN');
    expect((await request(`${hub.api}/users`)).status).toBe(401);
    expect((await patch(admin.id, { role: 'user' }, user.body.data.access_token)).status).toBe(403);
  });

  it('lists users as a page and creates users with a role', async () => {
    const body = { ...newUser('made'), role: 'admin' };
    const created = await request(`${hub.api}/users`, asAdmin(jsonBody(body)));
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({ username: body.username, email: body.email, role: 'admin', is_active: true });
    expect(created.body.data).not.toHaveProperty('password_hash');
    expect((await request(`${hub.api}/users`, asAdmin(jsonBody(body)))).status).toBe(409);
    const login = await request(`${hub.api}/auth/login`, jsonBody({ username: body.username, password: body.password }));
    expect(login.body.data.user.role).toBe('admin');
    const page = await request(`${hub.api}/users?limit=1`, asAdmin());
    expect(page.status).toBe(200);
    expect(page.body.data).toMatchObject({ items: [expect.objectContaining({ id: admin.id })], has_more: true, next_cursor: expect.any(String) });
    expect(page.body.data.total).toBeGreaterThanOrEqual(2);
  });

  it('promotes at once: the role comes from the database, not the token', async () => {
    const user = await register(hub.api);
    const token = user.body.data.access_token;
    expect((await request(`${hub.api}/users`, bearer(token))).status).toBe(403);
    const promoted = await patch(user.body.data.user.id, { role: 'admin' });
    expect(promoted.status).toBe(200);
    expect(promoted.body.data.role).toBe('admin');
    expect((await request(`${hub.api}/users`, bearer(token))).status).toBe(200);
  });

  it('deactivation refuses the user everywhere: access token, API key, refresh, login', async () => {
    const body = newUser();
    const user = await register(hub.api, body);
    const token = user.body.data.access_token;
    const key = (await request(`${hub.api}/auth/api-keys`, jsonBody({ label: 'k' }, { authorization: `Bearer ${token}` }))).body.data.key;
    expect((await patch(user.body.data.user.id, { is_active: false })).body.data.is_active).toBe(false);
    expect((await request(`${hub.api}/auth/me`, bearer(token))).status).toBe(401);
    expect((await request(`${hub.api}/auth/me`, bearer(key))).status).toBe(401);
    expect((await request(`${hub.api}/auth/refresh`, jsonBody({ refresh_token: user.body.data.refresh_token }))).status).toBe(401);
    const login = await request(`${hub.api}/auth/login`, jsonBody({ username: body.username, password: body.password }));
    expect(login.status).toBe(401);
    expect(login.body.error.message).toBe('Invalid username or password.');
    expect((await patch(user.body.data.user.id, { is_active: true })).status).toBe(200);
    expect((await request(`${hub.api}/auth/me`, bearer(key))).status).toBe(200);
  });

  it('an admin cannot demote, deactivate or delete themself', async () => {
    const demote = await patch(admin.id, { role: 'user' });
    expect(demote.status).toBe(403);
    expect(demote.body.error.code).toBe('FORBIDDEN');
    expect((await patch(admin.id, { is_active: false })).status).toBe(403);
    expect((await request(`${hub.api}/users/${admin.id}`, asAdmin({ method: 'DELETE' }))).status).toBe(403);
    expect((await patch(admin.id, { role: 'admin', is_active: true })).status).toBe(200);
    expect((await request(`${hub.api}/auth/me`, bearer(admin.token))).body.data.role).toBe('admin');
  });

  it('deletes a user with their sessions; a second delete is 404', async () => {
    const user = await register(hub.api);
    const id = user.body.data.user.id;
    expect((await request(`${hub.api}/users/${id}`, asAdmin({ method: 'DELETE' }))).status).toBe(204);
    expect((await request(`${hub.api}/auth/me`, bearer(user.body.data.access_token))).status).toBe(401);
    expect((await request(`${hub.api}/auth/refresh`, jsonBody({ refresh_token: user.body.data.refresh_token }))).status).toBe(401);
    const again = await request(`${hub.api}/users/${id}`, asAdmin({ method: 'DELETE' }));
    expect(again.status).toBe(404);
    expect(again.body.error.code).toBe('NOT_FOUND');
  });

  it('validates: 422 for an empty change, a bad role, a malformed id', async () => {
    const user = await register(hub.api);
    const empty = await patch(user.body.data.user.id, {});
    expect(empty.status).toBe(422);
    const badRole = await patch(user.body.data.user.id, { role: 'root' });
    expect(Object.keys(badRole.body.error.details.fields)).toEqual(['role']);
    const badId = await patch('not-a-uuid', { role: 'user' });
    expect(Object.keys(badId.body.error.details.fields)).toEqual(['path.id']);
    expect((await patch('00000000-0000-4000-8000-000000000000', { role: 'user' })).status).toBe(404);
  });
});
