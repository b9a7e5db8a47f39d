import { bearer, register, startAuthService, type AuthService } from '../helpers/auth-service';
import { jsonBody, request } from '../helpers/http';
import { removeTempDirs } from '../helpers/temp-dir';

/**
 * The Web UI's refresh token stays out of script reach (issue 26): asked for with
 * `X-Switchboard-Refresh: cookie`, it comes as an HttpOnly, SameSite=Strict cookie scoped to
 * /api/v1/auth/refresh and the JSON says null; refresh and sign-out work from the cookie alone.
 * CLI/SDK clients (no header) keep the JSON token (decisions.md §2).
 */
let hub: AuthService;

beforeAll(async () => {
  hub = await startAuthService();
});

afterAll(async () => {
  await hub.close();
  removeTempDirs();
});

const COOKIE_MODE = { 'x-switchboard-refresh': 'cookie' };
const cookieOf = (headers: Headers) => /^switchboard_refresh=([^;]+)/.exec(headers.get('set-cookie') ?? '')?.[1] ?? null;
const post = (path: string, body: unknown, headers: Record<string, string> = {}) => request(`${hub.api}${path}`, jsonBody(body, headers));

it('keeps the JSON API as documented for clients that do not ask for the cookie', async () => {
  const registered = await register(hub.api);
  expect(registered.body.data.refresh_token).toEqual(expect.any(String));
  expect(registered.headers.get('set-cookie')).toBeNull();
  const refreshed = await post('/auth/refresh', { refresh_token: registered.body.data.refresh_token });
  expect([refreshed.status, typeof refreshed.body.data.refresh_token]).toEqual([200, 'string']);
});

it('hands a browser its refresh token as an HttpOnly SameSite cookie for the refresh endpoint only', async () => {
  const user = { username: 'browser_user', email: 'browser@example.test', password: 'long-enough-password' };
  await register(hub.api, user);
  const login = await post('/auth/login', { username: user.username, password: user.password }, COOKIE_MODE);
  expect(login.status).toBe(200);
  expect(login.body.data.refresh_token).toBeNull();
  const setCookie = login.headers.get('set-cookie')!;
  expect(setCookie).toMatch(/; Path=\/api\/v1\/auth\/refresh;/);
  expect(setCookie).toMatch(/; HttpOnly;/);
  expect(setCookie).toMatch(/SameSite=Strict$/);
  const first = cookieOf(login.headers)!;

  // Refreshed from the cookie alone; the cookie rotates with the token.
  const refreshed = await post('/auth/refresh', {}, { ...COOKIE_MODE, cookie: `switchboard_refresh=${first}` });
  expect([refreshed.status, refreshed.body.data.refresh_token]).toEqual([200, null]);
  const second = cookieOf(refreshed.headers)!;
  expect(second).not.toBe(first);
  expect((await request(`${hub.api}/auth/me`, bearer(refreshed.body.data.access_token))).status).toBe(200);

  // A spent cookie is refused (and revokes the family, as a reused token does); the cookie is cleared.
  const reused = await post('/auth/refresh', {}, { ...COOKIE_MODE, cookie: `switchboard_refresh=${first}` });
  expect(reused.status).toBe(401);
  expect(reused.headers.get('set-cookie')).toMatch(/^switchboard_refresh=;/);

  // No token anywhere: 422 on refresh_token.
  const none = await post('/auth/refresh', {}, COOKIE_MODE);
  expect([none.status, Object.keys(none.body.error.details.fields)]).toEqual([422, ['refresh_token']]);
});

it('signs a browser out with DELETE /auth/refresh: the session ends and the cookie is cleared', async () => {
  const user = { username: 'leaving_user', email: 'leaving@example.test', password: 'long-enough-password' };
  await register(hub.api, user);
  const login = await post('/auth/login', { username: user.username, password: user.password }, COOKIE_MODE);
  const token = cookieOf(login.headers)!;
  const out = await request(`${hub.api}/auth/refresh`, { method: 'DELETE', headers: { cookie: `switchboard_refresh=${token}` } });
  expect(out.status).toBe(204);
  expect(out.headers.get('set-cookie')).toMatch(/^switchboard_refresh=;/);
  expect((await post('/auth/refresh', {}, { ...COOKIE_MODE, cookie: `switchboard_refresh=${token}` })).status).toBe(401);
});
