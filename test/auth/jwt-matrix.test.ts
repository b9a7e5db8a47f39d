import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { bearer, register, signTestJwt, startAuthService, type AuthService } from '../helpers/auth-service';
import { request } from '../helpers/http';
import { removeTempDirs } from '../helpers/temp-dir';

let hub: AuthService;
let userId: string;
let validToken: string;

beforeAll(async () => {
  hub = await startAuthService();
  const registered = await register(hub.api);
  userId = registered.body.data.user.id;
  validToken = registered.body.data.access_token;
});

afterAll(async () => {
  await hub.close();
  removeTempDirs();
});

const now = () => Math.floor(Date.now() / 1000);
const base64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** The claims of a good token; each case below breaks one thing. */
function claims(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const all = { sub: userId, role: 'user', typ: 'access', iss: 'switchboard', aud: 'switchboard-api', iat: now(), exp: now() + 600, ...overrides };
  return Object.fromEntries(Object.entries(all).filter(([, value]) => value !== undefined));
}

function me(token: string) {
  return request(`${hub.api}/auth/me`, bearer(token));
}

describe('access JWT validation', () => {
  it('accepts the token the service issued, and one we sign the same way (control)', async () => {
    expect((await me(validToken)).status).toBe(200);
    expect((await me(signTestJwt(claims()))).status).toBe(200);
  });

  it('answers 401 TOKEN_EXPIRED only for a genuine token past its exp', async () => {
    const expired = await me(signTestJwt(claims({ iat: now() - 1200, exp: now() - 600 })));
    expect(expired.status).toBe(401);
    expect(expired.body.error.code).toBe('TOKEN_EXPIRED');
    // Expired *and* signed with another key: the signature fails first, so nothing is revealed.
    const forgedExpired = await me(signTestJwt(claims({ iat: now() - 1200, exp: now() - 600 }), {}, randomBytes(32).toString('hex')));
    expect(forgedExpired.body.error.code).toBe('UNAUTHORIZED');
  });

  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const [header, payload] = signTestJwt(claims()).split('.');
  const cases: [string, () => string][] = [
    ['alg none, unsigned', () => `${base64url({ alg: 'none', typ: 'JWT' })}.${base64url(claims())}.`],
    ['alg none with a signature part', () => `${base64url({ alg: 'none', typ: 'JWT' })}.${base64url(claims())}.${signTestJwt(claims()).split('.')[2]}`],
    ['signed with another key', () => signTestJwt(claims(), {}, randomBytes(32).toString('hex'))],
    ['HS512 with the right key', () => signTestJwt(claims(), { algorithm: 'HS512' })],
    ['RS256 with an RSA key', () => signTestJwt(claims(), { algorithm: 'RS256' }, privateKey)],
    ['no exp', () => signTestJwt(claims({ exp: undefined }))],
    ['typ refresh', () => signTestJwt(claims({ typ: 'refresh' }))],
    ['no typ', () => signTestJwt(claims({ typ: undefined }))],
    ['another issuer', () => signTestJwt(claims({ iss: 'someone-else' }))],
    ['another audience', () => signTestJwt(claims({ aud: 'other-api' }))],
    ['no sub', () => signTestJwt(claims({ sub: undefined }))],
    ['sub of no user', () => signTestJwt(claims({ sub: '00000000-0000-4000-8000-000000000000' }))],
    [
      'tampered payload (role admin)',
      () => `${header}.${base64url({ ...JSON.parse(Buffer.from(payload!, 'base64url').toString()), role: 'admin' })}.${validToken.split('.')[2]}`,
    ],
    ['tampered signature', () => `${validToken.slice(0, -4)}${validToken.slice(-4) === 'AAAA' ? 'BBBB' : 'AAAA'}`],
    ['malformed: one segment', () => 'not-a-jwt'],
    ['malformed: garbage segments', () => 'a.b.c'],
    ['malformed: JSON that is not an object', () => `${base64url('x')}.${base64url(42)}.sig`],
    ['an API-key-shaped string', () => `svc_live_${randomBytes(32).toString('base64url')}`],
  ];

  it.each(cases)('refuses %s with 401 UNAUTHORIZED', async (_name, make) => {
    const response = await me(make());
    expect(response.status).toBe(401);
    expect(response.body.error.code).toBe('UNAUTHORIZED');
    expect(response.body.error.details).toEqual({});
  });

  it('gives every refusal the same message: it never says which part was wrong', async () => {
    const messages = new Set<string>();
    for (const [, make] of cases) messages.add((await me(make())).body.error.message);
    messages.add((await request(`${hub.api}/auth/me`)).body.error.message);
    messages.add((await request(`${hub.api}/auth/me`, { headers: { authorization: 'Basic dXNlcjpwYXNz' } })).body.error.message);
    expect(messages.size).toBe(1);
  });

  it('refuses a credential sent with another scheme or with extra words', async () => {
    for (const authorization of [`Token ${validToken}`, `Bearer ${validToken} extra`, `Bearer`, validToken]) {
      expect((await request(`${hub.api}/auth/me`, { headers: { authorization } })).status).toBe(401);
    }
    expect((await request(`${hub.api}/auth/me`, { headers: { authorization: `BEARER ${validToken}` } })).status).toBe(200);
  });
});
