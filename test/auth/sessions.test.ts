import { QueryTypes } from 'sequelize';
import { verifyPassword } from '../../src/auth/passwords';
import { REFRESH_RACE_GRACE_MS } from '../../src/auth/refresh-tokens';
import { bearer, newUser, register, startAuthService, type AuthService } from '../helpers/auth-service';
import { jsonBody, request } from '../helpers/http';
import { removeTempDirs } from '../helpers/temp-dir';

let hub: AuthService;

beforeAll(async () => {
  hub = await startAuthService();
});

afterAll(async () => {
  await hub.close();
  removeTempDirs();
});

/** A rotated token reused within REFRESH_RACE_GRACE_MS counts as a lost race, not as theft. */
const pastRaceGrace = () => new Promise((resolve) => setTimeout(resolve, REFRESH_RACE_GRACE_MS + 50));

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** An argon2id verification (19 MiB, 2 passes) takes ~5 ms here; a lookup ~1 ms. */
const ARGON2_FLOOR_MS = 3;
/** CPU one argon2id verification costs at least (about 5 ms here). */
const ARGON2_CPU_FLOOR_MS = 2;

describe('register', () => {
  it('makes the first user admin and later ones user, returning the token pair', async () => {
    const first = newUser('first');
    const response = await register(hub.api, first);
    expect(response.status).toBe(201);
    expect(response.body.data).toEqual({
      access_token: expect.stringMatching(/^[\w-]+\.[\w-]+\.[\w-]+$/),
      refresh_token: expect.any(String),
      token_type: 'bearer',
      expires_in: 900,
      user: {
        id: expect.stringMatching(UUID),
        username: first.username,
        email: first.email,
        role: 'admin',
        is_active: true,
        created_at: expect.stringMatching(/Z$/),
      },
    });
    const second = await register(hub.api);
    expect(second.status).toBe(201);
    expect(second.body.data.user.role).toBe('user');
  });

  it('stores argon2id hashes, never the password', async () => {
    const body = newUser();
    await register(hub.api, body);
    const rows = await hub.database.sequelize.query<{ password_hash: string }>('SELECT password_hash FROM users WHERE username = :name', {
      replacements: { name: body.username },
      type: QueryTypes.SELECT,
    });
    expect(rows[0]!.password_hash).toMatch(/^\$argon2id\$/);
    expect(rows[0]!.password_hash).not.toContain(body.password);
  });

  it('answers 409 CONFLICT for a duplicate username (any case) or email', async () => {
    const body = newUser();
    expect((await register(hub.api, body)).status).toBe(201);
    const sameName = await register(hub.api, { ...newUser(), username: body.username.toUpperCase() });
    expect(sameName.status).toBe(409);
    expect(sameName.body.error.code).toBe('CONFLICT');
    const sameEmail = await register(hub.api, { ...newUser(), email: body.email.toUpperCase() });
    expect(sameEmail.status).toBe(409);
  });

  it('answers 422 with details.fields for malformed bodies', async () => {
    const cases: [unknown, string[]][] = [
      [{ username: 'ab', email: 'x@example.com', password: 'long enough' }, ['username']],
      [{ username: 'has space', email: 'x@example.com', password: 'long enough' }, ['username']],
      [{ username: 'a'.repeat(65), email: 'x@example.com', password: 'long enough' }, ['username']],
      [{ username: 'valid_name', email: 'not-an-email', password: 'long enough' }, ['email']],
      [{ username: 'valid_name', email: 'x@example.com', password: 'short' }, ['password']],
      [{ username: 'valid_name', email: 'x@example.com', password: 'p'.repeat(129) }, ['password']],
      [{ username: 42, email: null }, ['username', 'email', 'password']],
      [{ username: 'valid_name', email: 'x@example.com', password: 'long enough', role: 'admin' }, ['body']],
    ];
    for (const [body, fields] of cases) {
      const response = await request(`${hub.api}/auth/register`, jsonBody(body));
      expect({ body, status: response.status, code: response.body.error.code }).toEqual({ body, status: 422, code: 'VALIDATION_ERROR' });
      expect(Object.keys(response.body.error.details.fields).sort()).toEqual(fields.sort());
    }
    const notAnObject = await request(`${hub.api}/auth/register`, jsonBody(['an', 'array']));
    expect(notAnObject.status).toBe(422);
    expect(Object.keys(notAnObject.body.error.details.fields)).toEqual(['body']);
  });
});

describe('login', () => {
  const body = newUser('login');
  beforeAll(async () => {
    expect((await register(hub.api, body)).status).toBe(201);
  });

  it('accepts the username (any case) or the email', async () => {
    for (const login of [body.username, body.username.toUpperCase(), body.email]) {
      const response = await request(`${hub.api}/auth/login`, jsonBody({ username: login, password: body.password }));
      expect(response.status).toBe(200);
      expect(response.body.data.user.username).toBe(body.username);
      expect(response.body.data.token_type).toBe('bearer');
    }
  });

  it('answers the same 401 for a wrong password and an unknown user', async () => {
    const wrongPassword = await request(`${hub.api}/auth/login`, jsonBody({ username: body.username, password: 'wrong password' }));
    const unknownUser = await request(`${hub.api}/auth/login`, jsonBody({ username: 'nobody_here', password: body.password }));
    for (const response of [wrongPassword, unknownUser]) {
      expect(response.status).toBe(401);
      expect(response.body.error.code).toBe('UNAUTHORIZED');
      expect(response.body.error.details).toEqual({});
    }
    expect(wrongPassword.body.error.message).toBe(unknownUser.body.error.message);
    expect(wrongPassword.body.error.message).not.toMatch(/password is wrong|no such user|unknown user/i);
  });

  it('takes about as long for an unknown user as for a wrong password (a dummy hash is verified)', async () => {
    const attempt = async (username: string) => {
      const started = process.hrtime.bigint();
      expect((await request(`${hub.api}/auth/login`, jsonBody({ username, password: 'wrong password' }))).status).toBe(401);
      return Number(process.hrtime.bigint() - started) / 1e6;
    };
    const known: number[] = [];
    const unknown: number[] = [];
    // Interleaved after a warm-up, so drift (allocator, CPU clock) hits both sides alike.
    for (let round = 0; round < 11; round += 1) {
      const knownTime = await attempt(body.username);
      const unknownTime = await attempt('nobody_at_all');
      if (round >= 2) {
        known.push(knownTime);
        unknown.push(unknownTime);
      }
    }
    // Load (other suites, other processes) only makes an argon2id verification slower, so lower
    // bounds hold on a busy machine where a ratio of two timings does not. Without the dummy
    // verification an unknown user answers from one indexed lookup (~1 ms).
    expect(Math.min(...unknown)).toBeGreaterThan(ARGON2_FLOOR_MS);
    expect(Math.min(...known)).toBeGreaterThan(ARGON2_FLOOR_MS);
  });

  it('verifies an unknown user against a dummy hash (an argon2id verification, not an early return)', async () => {
    await verifyPassword(null, 'warm-up'); // the dummy hash is made once
    // CPU time, not wall time: a busy machine slows a verification down but never makes it cheaper.
    // An argon2id verification (19 MiB, 2 passes) costs ~5 ms of CPU here; an early return ~0.
    const before = process.cpuUsage();
    expect(await verifyPassword(null, 'any password')).toBe(false);
    const used = process.cpuUsage(before);
    expect((used.user + used.system) / 1000).toBeGreaterThan(ARGON2_CPU_FLOOR_MS);
  });

  it('answers 422 for a malformed login body', async () => {
    const response = await request(`${hub.api}/auth/login`, jsonBody({ username: '' }));
    expect(response.status).toBe(422);
    expect(Object.keys(response.body.error.details.fields).sort()).toEqual(['password', 'username']);
  });
});

describe('me', () => {
  it('returns the caller, and 401 without a credential', async () => {
    const registered = await register(hub.api);
    const me = await request(`${hub.api}/auth/me`, bearer(registered.body.data.access_token));
    expect(me.status).toBe(200);
    expect(me.body.data).toEqual(registered.body.data.user);
    const lowercaseScheme = await request(`${hub.api}/auth/me`, { headers: { authorization: `bearer ${registered.body.data.access_token}` } });
    expect(lowercaseScheme.status).toBe(200);
    const anonymous = await request(`${hub.api}/auth/me`);
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.error.code).toBe('UNAUTHORIZED');
  });

  it('never accepts a refresh token as an access token', async () => {
    const registered = await register(hub.api);
    const response = await request(`${hub.api}/auth/me`, bearer(registered.body.data.refresh_token));
    expect(response.status).toBe(401);
    expect(response.body.error.code).toBe('UNAUTHORIZED');
  });
});

describe('refresh', () => {
  it('rotates: the new pair works, the old refresh token is spent', async () => {
    const registered = await register(hub.api);
    const first = registered.body.data.refresh_token as string;
    const rotated = await request(`${hub.api}/auth/refresh`, jsonBody({ refresh_token: first }));
    expect(rotated.status).toBe(200);
    expect(rotated.body.data.refresh_token).not.toBe(first);
    expect(rotated.body.data.user.id).toBe(registered.body.data.user.id);
    expect((await request(`${hub.api}/auth/me`, bearer(rotated.body.data.access_token))).status).toBe(200);
    const again = await request(`${hub.api}/auth/refresh`, jsonBody({ refresh_token: rotated.body.data.refresh_token }));
    expect(again.status).toBe(200);
  });

  it('reuse of a rotated token revokes the whole family', async () => {
    const registered = await register(hub.api);
    const original = registered.body.data.refresh_token as string;
    const rotated = await request(`${hub.api}/auth/refresh`, jsonBody({ refresh_token: original }));
    expect(rotated.status).toBe(200);
    await pastRaceGrace();
    const reuse = await request(`${hub.api}/auth/refresh`, jsonBody({ refresh_token: original }));
    expect(reuse.status).toBe(401);
    expect(reuse.body.error.code).toBe('UNAUTHORIZED');
    // The legitimate successor is revoked too: the thief and the victim both have to log in again.
    const successor = await request(`${hub.api}/auth/refresh`, jsonBody({ refresh_token: rotated.body.data.refresh_token }));
    expect(successor.status).toBe(401);
  });

  it('a separate login (another family) survives the reuse of this one', async () => {
    const body = newUser();
    const registered = await register(hub.api, body);
    const otherLogin = await request(`${hub.api}/auth/login`, jsonBody({ username: body.username, password: body.password }));
    const original = registered.body.data.refresh_token as string;
    await request(`${hub.api}/auth/refresh`, jsonBody({ refresh_token: original }));
    await pastRaceGrace();
    expect((await request(`${hub.api}/auth/refresh`, jsonBody({ refresh_token: original }))).status).toBe(401);
    expect((await request(`${hub.api}/auth/refresh`, jsonBody({ refresh_token: otherLogin.body.data.refresh_token }))).status).toBe(200);
  });

  it('two concurrent refreshes with one token: exactly one wins, and its successor works', async () => {
    const registered = await register(hub.api);
    const token = registered.body.data.refresh_token as string;
    const results = await Promise.all([1, 2, 3].map(() => request(`${hub.api}/auth/refresh`, jsonBody({ refresh_token: token }))));
    const winners = results.filter((r) => r.status === 200);
    expect(winners).toHaveLength(1);
    expect(results.filter((r) => r.status === 401)).toHaveLength(2);
    const next = await request(`${hub.api}/auth/refresh`, jsonBody({ refresh_token: winners[0]!.body.data.refresh_token }));
    expect(next.status).toBe(200);
  });

  it('a rotated token presented again within the race grace is refused without revoking the family', async () => {
    const registered = await register(hub.api);
    const original = registered.body.data.refresh_token as string;
    const rotated = await request(`${hub.api}/auth/refresh`, jsonBody({ refresh_token: original }));
    expect((await request(`${hub.api}/auth/refresh`, jsonBody({ refresh_token: original }))).status).toBe(401);
    expect((await request(`${hub.api}/auth/refresh`, jsonBody({ refresh_token: rotated.body.data.refresh_token }))).status).toBe(200);
  });

  it('refuses unknown and expired tokens alike, and stores only hashes', async () => {
    const unknown = await request(`${hub.api}/auth/refresh`, jsonBody({ refresh_token: 'not-a-token' }));
    expect(unknown.status).toBe(401);
    const registered = await register(hub.api);
    const token = registered.body.data.refresh_token as string;
    const stored = await hub.database.sequelize.query<{ token_hash: string }>('SELECT token_hash FROM refresh_tokens', { type: QueryTypes.SELECT });
    expect(stored.some((row) => row.token_hash === token)).toBe(false);
    await hub.database.sequelize.query('UPDATE refresh_tokens SET expires_at = :past WHERE user_id = :id', {
      replacements: { past: new Date(Date.now() - 1000), id: registered.body.data.user.id },
    });
    const expired = await request(`${hub.api}/auth/refresh`, jsonBody({ refresh_token: token }));
    expect(expired.status).toBe(401);
    expect(expired.body.error.message).toBe(unknown.body.error.message);
  });
});

describe('logout', () => {
  it('ends the session of the given refresh token, idempotently', async () => {
    const registered = await register(hub.api);
    const token = registered.body.data.refresh_token as string;
    const logout = await request(`${hub.api}/auth/logout`, jsonBody({ refresh_token: token }));
    expect(logout.status).toBe(204);
    expect((await request(`${hub.api}/auth/logout`, jsonBody({ refresh_token: token }))).status).toBe(204);
    expect((await request(`${hub.api}/auth/refresh`, jsonBody({ refresh_token: token }))).status).toBe(401);
  });

  it('logout-all revokes every refresh token and earlier access tokens', async () => {
    const body = newUser();
    const registered = await register(hub.api, body);
    const second = await request(`${hub.api}/auth/login`, jsonBody({ username: body.username, password: body.password }));
    // Access tokens carry iat in whole seconds; cross a second boundary so "issued before" is certain.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const access = registered.body.data.access_token as string;
    expect((await request(`${hub.api}/auth/logout-all`, { method: 'POST', ...bearer(access) })).status).toBe(204);
    expect((await request(`${hub.api}/auth/me`, bearer(access))).status).toBe(401);
    for (const token of [registered.body.data.refresh_token, second.body.data.refresh_token]) {
      expect((await request(`${hub.api}/auth/refresh`, jsonBody({ refresh_token: token }))).status).toBe(401);
    }
    const fresh = await request(`${hub.api}/auth/login`, jsonBody({ username: body.username, password: body.password }));
    expect((await request(`${hub.api}/auth/me`, bearer(fresh.body.data.access_token))).status).toBe(200);
  });
});

describe('change-password', () => {
  it('checks the current password, ends other sessions and returns a working pair', async () => {
    const body = newUser();
    const registered = await register(hub.api, body);
    const access = registered.body.data.access_token as string;
    const wrong = await request(
      `${hub.api}/auth/change-password`,
      jsonBody({ current_password: 'not it at all', new_password: 'a brand new password' }, { authorization: `Bearer ${access}` }),
    );
    expect(wrong.status).toBe(422);
    expect(Object.keys(wrong.body.error.details.fields)).toEqual(['current_password']);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const changed = await request(
      `${hub.api}/auth/change-password`,
      jsonBody({ current_password: body.password, new_password: 'a brand new password' }, { authorization: `Bearer ${access}` }),
    );
    expect(changed.status).toBe(200);
    expect((await request(`${hub.api}/auth/me`, bearer(changed.body.data.access_token))).status).toBe(200);
    expect((await request(`${hub.api}/auth/me`, bearer(access))).status).toBe(401);
    expect((await request(`${hub.api}/auth/refresh`, jsonBody({ refresh_token: registered.body.data.refresh_token }))).status).toBe(401);
    expect((await request(`${hub.api}/auth/login`, jsonBody({ username: body.username, password: body.password }))).status).toBe(401);
    expect((await request(`${hub.api}/auth/login`, jsonBody({ username: body.username, password: 'a brand new password' }))).status).toBe(200);
  });

  it('refuses a too-short new password with 422', async () => {
    const registered = await register(hub.api);
    const response = await request(
      `${hub.api}/auth/change-password`,
      jsonBody({ current_password: 'whatever1', new_password: 'short' }, { authorization: `Bearer ${registered.body.data.access_token}` }),
    );
    expect(response.status).toBe(422);
    expect(Object.keys(response.body.error.details.fields)).toEqual(['new_password']);
  });
});
