import { QueryTypes } from 'sequelize';
import { bearer, register, startAuthService, type AuthService } from '../helpers/auth-service';
import { jsonBody, request } from '../helpers/http';
import { removeTempDirs } from '../helpers/temp-dir';

let hub: AuthService;
let adminToken: string;
let userToken: string;
let userId: string;

beforeAll(async () => {
  hub = await startAuthService();
  adminToken = (await register(hub.api)).body.data.access_token;
  const user = await register(hub.api);
  userToken = user.body.data.access_token;
  userId = user.body.data.user.id;
});

afterAll(async () => {
  await hub.close();
  removeTempDirs();
});

async function createKey(token: string, body: Record<string, unknown> = { label: 'ci' }) {
  return request(`${hub.api}/auth/api-keys`, jsonBody(body, { authorization: `Bearer ${token}` }));
}

describe('API keys', () => {
  it('shows the key once, with its 12-character prefix, and stores only a hash', async () => {
    const created = await createKey(userToken, { label: 'deploy script' });
    expect(created.status).toBe(201);
    const key = created.body.data.key as string;
    expect(key).toMatch(/^svc_live_[A-Za-z0-9_-]{43}$/);
    expect(created.body.data).toEqual({
      id: expect.any(String),
      user_id: userId,
      label: 'deploy script',
      key_prefix: key.slice(0, 12),
      created_at: expect.stringMatching(/Z$/),
      expires_at: null,
      last_used_at: null,
      revoked_at: null,
      key,
    });
    const list = await request(`${hub.api}/auth/api-keys`, bearer(userToken));
    expect(list.status).toBe(200);
    expect(JSON.stringify(list.body)).not.toContain(key);
    expect(list.body.data.items.find((item: any) => item.id === created.body.data.id).key_prefix).toBe(key.slice(0, 12));
    const rows = await hub.database.sequelize.query<{ key_hash: string }>('SELECT key_hash FROM api_keys', { type: QueryTypes.SELECT });
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.every((row) => row.key_hash.length === 64 && !key.includes(row.key_hash))).toBe(true);
  });

  it('authenticates as Bearer (any case) and as X-API-Key, and records last_used_at', async () => {
    const created = await createKey(userToken);
    const key = created.body.data.key as string;
    const variants: Record<string, string>[] = [{ authorization: `Bearer ${key}` }, { authorization: `bearer ${key}` }, { 'x-api-key': key }];
    for (const headers of variants) {
      const me = await request(`${hub.api}/auth/me`, { headers });
      expect(me.status).toBe(200);
      expect(me.body.data.id).toBe(userId);
    }
    const list = await request(`${hub.api}/auth/api-keys`, bearer(userToken));
    const item = list.body.data.items.find((entry: any) => entry.id === created.body.data.id);
    expect(Date.now() - Date.parse(item.last_used_at)).toBeLessThan(60_000);
  });

  it('refuses unknown keys, and a JWT sent as X-API-Key', async () => {
    const unknown = `svc_live_${'A'.repeat(43)}`;
    expect((await request(`${hub.api}/auth/me`, bearer(unknown))).status).toBe(401);
    expect((await request(`${hub.api}/auth/me`, { headers: { 'x-api-key': unknown } })).status).toBe(401);
    expect((await request(`${hub.api}/auth/me`, { headers: { 'x-api-key': userToken } })).status).toBe(401);
    expect((await request(`${hub.api}/auth/me`, { headers: { 'x-api-key': 'svc_live_short' } })).status).toBe(401);
  });

  it('stops working once revoked; revoking again is fine; others cannot revoke it', async () => {
    const created = await createKey(userToken);
    const key = created.body.data.key as string;
    const other = await register(hub.api);
    const foreign = await request(`${hub.api}/auth/api-keys/${created.body.data.id}`, { method: 'DELETE', ...bearer(other.body.data.access_token) });
    expect(foreign.status).toBe(404);
    expect((await request(`${hub.api}/auth/me`, bearer(key))).status).toBe(200);
    const revoked = await request(`${hub.api}/auth/api-keys/${created.body.data.id}`, { method: 'DELETE', ...bearer(userToken) });
    expect(revoked.status).toBe(204);
    const me = await request(`${hub.api}/auth/me`, bearer(key));
    expect(me.status).toBe(401);
    expect(me.body.error.code).toBe('UNAUTHORIZED');
    expect((await request(`${hub.api}/auth/api-keys/${created.body.data.id}`, { method: 'DELETE', ...bearer(userToken) })).status).toBe(204);
    const list = await request(`${hub.api}/auth/api-keys`, bearer(userToken));
    expect(list.body.data.items.find((entry: any) => entry.id === created.body.data.id).revoked_at).toEqual(expect.stringMatching(/Z$/));
  });

  it('lets an admin revoke anyone’s key', async () => {
    const created = await createKey(userToken);
    const revoked = await request(`${hub.api}/auth/api-keys/${created.body.data.id}`, { method: 'DELETE', ...bearer(adminToken) });
    expect(revoked.status).toBe(204);
    expect((await request(`${hub.api}/auth/me`, bearer(created.body.data.key))).status).toBe(401);
  });

  it('expires: expires_in_days sets expires_at, and a key past it is refused', async () => {
    const created = await createKey(userToken, { label: 'short lived', expires_in_days: 1 });
    expect(created.status).toBe(201);
    const expiresIn = Date.parse(created.body.data.expires_at) - Date.now();
    expect(expiresIn).toBeGreaterThan(23 * 3600_000);
    expect(expiresIn).toBeLessThanOrEqual(24 * 3600_000);
    expect((await request(`${hub.api}/auth/me`, bearer(created.body.data.key))).status).toBe(200);
    // A key whose expiry has passed (set in the database: the API cannot make one).
    const lapsed = await createKey(userToken, { label: 'lapsed', expires_in_days: 1 });
    await hub.database.sequelize.query('UPDATE api_keys SET expires_at = :past WHERE id = :id', {
      replacements: { past: new Date(Date.now() - 1000), id: lapsed.body.data.id },
    });
    expect((await request(`${hub.api}/auth/me`, bearer(lapsed.body.data.key))).status).toBe(401);
  });

  it('validates the body: 422 with details.fields', async () => {
    for (const [body, field] of [
      [{}, 'label'],
      [{ label: '' }, 'label'],
      [{ label: 'x'.repeat(101) }, 'label'],
      [{ label: 'ok', expires_in_days: 0 }, 'expires_in_days'],
      [{ label: 'ok', expires_in_days: 1.5 }, 'expires_in_days'],
    ] as const) {
      const response = await createKey(userToken, body);
      expect(response.status).toBe(422);
      expect(Object.keys(response.body.error.details.fields)).toEqual([field]);
    }
  });

  it('lists as a page: limit, next_cursor, has_more, total', async () => {
    const fresh = await register(hub.api);
    const token = fresh.body.data.access_token;
    for (const label of ['one', 'two', 'three']) expect((await createKey(token, { label })).status).toBe(201);
    const first = await request(`${hub.api}/auth/api-keys?limit=2`, bearer(token));
    expect(first.body.data).toMatchObject({ has_more: true, total: 3 });
    expect(first.body.data.items.map((item: any) => item.label)).toEqual(['one', 'two']);
    const second = await request(`${hub.api}/auth/api-keys?limit=2&cursor=${first.body.data.next_cursor}`, bearer(token));
    expect(second.body.data).toEqual({ items: [expect.objectContaining({ label: 'three' })], next_cursor: null, has_more: false, total: 3 });
    const badCursor = await request(`${hub.api}/auth/api-keys?cursor=bogus`, bearer(token));
    expect(badCursor.status).toBe(422);
    expect(Object.keys(badCursor.body.error.details.fields)).toEqual(['query.cursor']);
    expect((await request(`${hub.api}/auth/api-keys?limit=101`, bearer(token))).status).toBe(422);
  });

  it('all=true is for admins only', async () => {
    expect((await request(`${hub.api}/auth/api-keys?all=true`, bearer(userToken))).status).toBe(403);
    const all = await request(`${hub.api}/auth/api-keys?all=true&limit=100`, bearer(adminToken));
    expect(all.status).toBe(200);
    expect(all.body.data.items.some((item: any) => item.user_id === userId)).toBe(true);
    const own = await request(`${hub.api}/auth/api-keys?limit=100`, bearer(adminToken));
    expect(own.body.data.items.some((item: any) => item.user_id === userId)).toBe(false);
  });
});
