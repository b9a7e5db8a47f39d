import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { Client } from 'pg';
import { io } from 'socket.io-client';
import { unauthorized } from '../../src/auth/authenticator';
import { runCli } from '../helpers/cli';
import { jsonBody, request } from '../helpers/http';
import { createTestPostgresDatabase, type TestPostgresDatabase } from '../helpers/postgres';
import { createTestIdp } from '../helpers/saml-idp';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir';
import { scaled } from './scale';
import { ACS_URL, enqueuePlainReplies, SP_ENTITY_ID, startAuthHub, telegramTextUpdate, type AuthHub } from './support/auth-hub';
import {
  accessClaims,
  attackerEc,
  attackerRsa,
  compactJwt,
  ecdsaSigner,
  hmacSigner,
  HS256,
  lastCharChanged,
  nowS,
  rsaSigner,
  unissuedApiKey,
} from './support/auth-forge';
import { BILLION_LAUGHS, doctype, SamlResponses, WRAPPINGS } from './support/auth-saml';
import { attemptEach, bearerWaysIn, probeSocket, refusal, restObservation, type WayIn } from './support/auth-ways-in';

/**
 * Issue 19, "Auth matrix": forged, expired, revoked, misplaced and borrowed credentials against a
 * real hub process (PostgreSQL, Redis, every channel on), on every way in where each applies. Each
 * class has its positive control (the genuine credential is accepted on the same ways in), so a
 * harness that refuses everything cannot pass. Pass: 0 accepted.
 */

interface Account {
  id: string;
  username: string;
  password: string;
  token: string;
  refreshToken: string;
}

let pg: TestPostgresDatabase;
let db: Client;
let hub: AuthHub;
let ada: Account; // the first user: admin
let bob: Account; // a user
let adaSession: string;
let bobSession: string;
let adaKey: { id: string; key: string };
let bobKey: { id: string; key: string };
let ways: WayIn[];
let saml: SamlResponses;

/** Every forged attempt, for the tally at the end: the way in, the case, what it answered. */
const attempts: { way: string; name: string; observed: string; accepted: boolean }[] = [];

const json = (token: string, body: unknown, method = 'POST') => ({ ...jsonBody(body, { authorization: `Bearer ${token}` }), method });
const auth = (token: string, method = 'GET') => ({ method, headers: { authorization: `Bearer ${token}` } });

async function login(username: string, password: string): Promise<Account> {
  const response = await request(`${hub.api}/auth/login`, jsonBody({ username, password }));
  if (response.status !== 200) throw new Error(`login ${username}: ${response.status} ${JSON.stringify(response.body)}`);
  const { access_token: token, refresh_token: refreshToken, user } = response.body.data;
  return { id: user.id, username, password, token, refreshToken };
}

async function registered(username: string): Promise<Account> {
  const password = `pw-${username}-long-enough`;
  const response = await request(`${hub.api}/auth/register`, jsonBody({ username, email: `${username}@example.com`, password }));
  if (response.status !== 201) throw new Error(`register ${username}: ${response.status}`);
  return login(username, password);
}

/** An admin made by ada (so a credential of theirs, were it accepted, would pass every role check). */
async function adminAccount(username: string): Promise<Account> {
  const password = `pw-${username}-long-enough`;
  const created = await request(`${hub.api}/users`, json(ada.token, { username, email: `${username}@example.com`, password, role: 'admin' }));
  if (created.status !== 201) throw new Error(`create ${username}: ${created.status} ${JSON.stringify(created.body)}`);
  return login(username, password);
}

async function apiKey(token: string, label: string): Promise<{ id: string; key: string }> {
  const created = await request(`${hub.api}/auth/api-keys`, json(token, { label }));
  if (created.status !== 201) throw new Error(`api key: ${created.status}`);
  return { id: created.body.data.id, key: created.body.data.key };
}

async function newSession(token: string): Promise<string> {
  return (await request(`${hub.api}/sessions`, json(token, {}))).body.data.id as string;
}

/** Waits until the wall clock is in a later second than `iat` (revocations compare whole seconds). */
async function pastSecondOf(iatS: number): Promise<void> {
  while (nowS() <= iatS) await new Promise((resolve) => setTimeout(resolve, 50));
}
const iatOf = (token: string) => JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()).iat as number;

/** The ways in that take a credential of this kind (only API keys travel in X-API-Key). */
const waysFor = (kind: 'api-key' | 'other') => ways.filter((way) => way.takes === 'any' || kind === 'api-key');

/** Tries `credential` on every way in that takes it; returns the table of answers. */
async function tryEverywhere(name: string, credential: string, kind: 'api-key' | 'other', accepted: boolean): Promise<Record<string, string>> {
  const applicable = waysFor(kind);
  const observed = await attemptEach(applicable, credential);
  const table = Object.fromEntries(applicable.map((way, index) => [way.name, observed[index]!]));
  if (!accepted)
    applicable.forEach((way, index) => attempts.push({ way: way.name, name, observed: observed[index]!, accepted: observed[index] === way.accepted }));
  return table;
}

function expectedTable(kind: 'api-key' | 'other', outcome: 'accepted' | 'UNAUTHORIZED' | 'TOKEN_EXPIRED'): Record<string, string> {
  return Object.fromEntries(waysFor(kind).map((way) => [way.name, outcome === 'accepted' ? way.accepted : refusal(way, outcome)]));
}

beforeAll(async () => {
  pg = await createTestPostgresDatabase();
  db = new Client({ connectionString: pg.url });
  hub = await startAuthHub({ databaseUrl: pg.url });
  await db.connect();
  ada = await registered('ada');
  bob = await registered('bob');
  [adaSession, bobSession, adaKey, bobKey] = await Promise.all([
    newSession(ada.token),
    newSession(bob.token),
    apiKey(ada.token, 'ada main'),
    apiKey(bob.token, 'bob main'),
  ]);
  ways = bearerWaysIn(hub.base, adaSession);
  saml = new SamlResponses(hub.api, hub.idp);
}, 60_000);

afterAll(async () => {
  await db?.end();
  await hub?.stop();
  await pg?.drop();
  removeTempDirs();
});

describe('access tokens (JWT)', () => {
  const controls: [string, () => string][] = [
    ['the token the hub issued at login', () => ada.token],
    [
      'a token signed like the hub’s (its secret, its claims): the forging harness works',
      () => compactJwt(HS256, accessClaims(ada.id), hmacSigner(hub.secrets.jwtSecret)),
    ],
  ];
  it.each(controls)('control: %s is accepted on every way in', async (name, make) => {
    expect(await tryEverywhere(name, make(), 'other', true)).toEqual(expectedTable('other', 'accepted'));
  });

  const secret = () => hub.secrets.jwtSecret;
  const forged: [string, () => string][] = [
    ['alg none, no signature', () => compactJwt({ alg: 'none', typ: 'JWT' }, accessClaims(ada.id), null)],
    ['alg NONE (other spelling), no signature', () => compactJwt({ alg: 'NONE', typ: 'JWT' }, accessClaims(ada.id), null)],
    ['alg none keeping a genuine signature', () => `${compactJwt({ alg: 'none', typ: 'JWT' }, accessClaims(ada.id), null)}${ada.token.split('.')[2]}`],
    ['HS256 signed with another key', () => compactJwt(HS256, accessClaims(ada.id), hmacSigner('not-the-hub-secret-0123456789abcdef'))],
    ['HS256 signed with an empty key', () => compactJwt(HS256, accessClaims(ada.id), hmacSigner(''))],
    [
      'HS512 with the hub’s own secret (an algorithm not on the list)',
      () => compactJwt({ alg: 'HS512', typ: 'JWT' }, accessClaims(ada.id), hmacSigner(secret(), 'sha512')),
    ],
    ['RS256 with an attacker’s key', () => compactJwt({ alg: 'RS256', typ: 'JWT' }, accessClaims(ada.id), rsaSigner(attackerRsa.privateKey))],
    [
      'RS256 with the attacker’s public key embedded in the header (jwk)',
      () =>
        compactJwt({ alg: 'RS256', typ: 'JWT', jwk: attackerRsa.publicKey.export({ format: 'jwk' }) }, accessClaims(ada.id), rsaSigner(attackerRsa.privateKey)),
    ],
    ['ES256 with an attacker’s key', () => compactJwt({ alg: 'ES256', typ: 'JWT' }, accessClaims(ada.id), ecdsaSigner(attackerEc.privateKey))],
    [
      'RS/HS confusion: HS256 keyed with a public certificate the hub holds (the SAML IdP’s)',
      () => compactJwt(HS256, accessClaims(ada.id), hmacSigner(hub.idp.certPem)),
    ],
    [
      'RS/HS confusion: header RS256, HMAC signature with the hub’s secret',
      () => compactJwt({ alg: 'RS256', typ: 'JWT' }, accessClaims(ada.id), hmacSigner(secret())),
    ],
    [
      'expired, and signed with another key (the signature is checked first)',
      () => compactJwt(HS256, accessClaims(ada.id, { iat: nowS() - 1200, exp: nowS() - 600 }), hmacSigner('another-key-0123456789abcdef')),
    ],
    [
      'issued in the future (iat an hour ahead)',
      () => compactJwt(HS256, accessClaims(ada.id, { iat: nowS() + 3600, exp: nowS() + 4200 }), hmacSigner(secret())),
    ],
    ['not valid before an hour from now (nbf)', () => compactJwt(HS256, accessClaims(ada.id, { nbf: nowS() + 3600 }), hmacSigner(secret()))],
    ['another issuer (iss)', () => compactJwt(HS256, accessClaims(ada.id, { iss: 'someone-else' }), hmacSigner(secret()))],
    ['another audience (aud)', () => compactJwt(HS256, accessClaims(ada.id, { aud: 'other-api' }), hmacSigner(secret()))],
    ['no audience', () => compactJwt(HS256, accessClaims(ada.id, { aud: undefined }), hmacSigner(secret()))],
    ['typ refresh', () => compactJwt(HS256, accessClaims(ada.id, { typ: 'refresh' }), hmacSigner(secret()))],
    ['no typ', () => compactJwt(HS256, accessClaims(ada.id, { typ: undefined }), hmacSigner(secret()))],
    ['no exp (would never expire)', () => compactJwt(HS256, accessClaims(ada.id, { exp: undefined }), hmacSigner(secret()))],
    ['no iat', () => compactJwt(HS256, accessClaims(ada.id, { iat: undefined }), hmacSigner(secret()))],
    ['no sub', () => compactJwt(HS256, accessClaims(undefined), hmacSigner(secret()))],
    ['sub not a string', () => compactJwt(HS256, accessClaims(42), hmacSigner(secret()))],
    ['sub of no user', () => compactJwt(HS256, accessClaims('00000000-0000-4000-8000-000000000000'), hmacSigner(secret()))],
    [
      'a user’s token with the role claim changed to admin (signature kept)',
      () => {
        const [header, payload, signature] = bob.token.split('.');
        const claims = { ...JSON.parse(Buffer.from(payload!, 'base64url').toString()), role: 'admin' };
        return `${header}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${signature}`;
      },
    ],
    ['a genuine token with one signature character changed', () => lastCharChanged(ada.token)],
    ['the refresh token, presented as an access token', () => ada.refreshToken],
  ];
  it.each(forged)('refuses %s on every way in (401 UNAUTHORIZED / close 4001)', async (name, make) => {
    expect(await tryEverywhere(name, make(), 'other', false)).toEqual(expectedTable('other', 'UNAUTHORIZED'));
  });

  it('answers a genuine but expired token 401 TOKEN_EXPIRED (close 4001 "token expired"), nothing else', async () => {
    const expired = compactJwt(HS256, accessClaims(ada.id, { iat: nowS() - 1200, exp: nowS() - 600 }), hmacSigner(hub.secrets.jwtSecret));
    expect(await tryEverywhere('expired', expired, 'other', false)).toEqual(expectedTable('other', 'TOKEN_EXPIRED'));
  });

  it('refuses a refresh token in X-API-Key, and an access token where a refresh token is asked for', async () => {
    const asKey = await request(`${hub.api}/auth/me`, { headers: { 'x-api-key': ada.refreshToken } });
    const asRefresh = await request(`${hub.api}/auth/refresh`, jsonBody({ refresh_token: ada.token }));
    expect([restObservation(asKey), restObservation(asRefresh)]).toEqual(['401 UNAUTHORIZED', '401 UNAUTHORIZED']);
    // Control: the refresh token does its own job (it is spent here; ada's access token lives on).
    const refreshed = await request(`${hub.api}/auth/refresh`, jsonBody({ refresh_token: ada.refreshToken }));
    expect(refreshed.status).toBe(200);
  });

  it('gives every refusal the same message: it never says which check failed', async () => {
    const messages = new Set<string>();
    for (const [, make] of forged) messages.add((await request(`${hub.api}/auth/me`, auth(make()))).body.error.message);
    expect([...messages]).toEqual([unauthorized().message]);
  });
});

describe('users who are gone, and credentials that were revoked', () => {
  let dave: Account; // deleted
  let erin: Account; // deactivated
  let frank: Account; // logged out everywhere
  let daveKey: string;
  let erinKey: string;
  let frankKey: string;
  let revokedKey: string;
  let expiredKey: string;

  beforeAll(async () => {
    [dave, erin, frank] = await Promise.all([adminAccount('dave'), adminAccount('erin'), adminAccount('frank')]);
    [daveKey, erinKey, frankKey] = (await Promise.all([apiKey(dave.token, 'dave'), apiKey(erin.token, 'erin'), apiKey(frank.token, 'frank')])).map(
      (created) => created.key,
    );
    const revoked = await apiKey(ada.token, 'to revoke');
    const expiring = await apiKey(ada.token, 'to expire');
    // Controls before the change: each of these credentials works on every way in.
    for (const credential of [dave.token, erin.token, frank.token, daveKey, erinKey, revoked.key]) {
      const kind = credential.startsWith('svc_live_') ? 'api-key' : 'other';
      expect(await tryEverywhere('control', credential, kind, true)).toEqual(expectedTable(kind, 'accepted'));
    }
    // The key that will expire is never used before it does: its expiry instant is set in the past.
    await db.query(`UPDATE api_keys SET expires_at = now() - interval '1 minute' WHERE id = $1`, [expiring.id]);
    expiredKey = expiring.key;
    expect((await request(`${hub.api}/users/${dave.id}`, auth(ada.token, 'DELETE'))).status).toBe(204);
    expect((await request(`${hub.api}/users/${erin.id}`, json(ada.token, { is_active: false }, 'PATCH'))).status).toBe(200);
    expect((await request(`${hub.api}/auth/api-keys/${revoked.id}`, auth(ada.token, 'DELETE'))).status).toBe(204);
    revokedKey = revoked.key;
    await pastSecondOf(iatOf(frank.token));
    expect((await request(`${hub.api}/auth/logout-all`, auth(frank.token, 'POST'))).status).toBe(204);
  }, 30_000);

  const cases: [string, () => string, 'api-key' | 'other'][] = [
    ['the token of a deleted user', () => dave.token, 'other'],
    ['the API key of a deleted user', () => daveKey, 'api-key'],
    ['the token of a deactivated user', () => erin.token, 'other'],
    ['the API key of a deactivated user', () => erinKey, 'api-key'],
    ['a token issued before its user logged out everywhere', () => frank.token, 'other'],
    ['a revoked API key (used, so cached, before it was revoked)', () => revokedKey, 'api-key'],
    ['an expired API key', () => expiredKey, 'api-key'],
    ['an API key the hub never issued', () => unissuedApiKey(), 'api-key'],
    ['a genuine API key with one character changed', () => lastCharChanged(adaKey.key), 'api-key'],
    ['a genuine API key cut short', () => adaKey.key.slice(0, -1), 'api-key'],
    ['only the listed prefix of a genuine API key', () => adaKey.key.slice(0, 12), 'api-key'],
  ];
  it.each(cases)('refuses %s on every way in', async (name, make, kind) => {
    expect(await tryEverywhere(name, make(), kind, false)).toEqual(expectedTable(kind, 'UNAUTHORIZED'));
  });

  it('control: API keys that were not revoked keep working, also for a user who logged out everywhere', async () => {
    expect(await tryEverywhere('control', adaKey.key, 'api-key', true)).toEqual(expectedTable('api-key', 'accepted'));
    expect(await tryEverywhere('control', frankKey, 'api-key', true)).toEqual(expectedTable('api-key', 'accepted'));
  });

  it('the CLI reports each refused credential as an authentication failure (exit 2) and works with the genuine ones', async () => {
    const configDir = makeTempDir();
    const storedLogin = (access: string, refresh: string) => {
      const dir = path.join(configDir, String(Math.random()).slice(2));
      mkdirSync(dir);
      writeFileSync(
        path.join(dir, 'credentials.json'),
        JSON.stringify({
          version: 1,
          hubs: { [hub.base]: { username: 'ada', access_token: access, refresh_token: refresh, saved_at: new Date().toISOString() } },
        }),
      );
      return dir;
    };
    const whoami = (env: Record<string, string>) => runCli(['whoami', '--json'], { SWITCHBOARD_URL: hub.base, SWITCHBOARD_CONFIG_DIR: makeTempDir(), ...env });
    const forgedToken = compactJwt({ alg: 'none', typ: 'JWT' }, accessClaims(ada.id), null);
    const runs = await Promise.all([
      whoami({ SWITCHBOARD_API_KEY: adaKey.key }),
      whoami({ SWITCHBOARD_CONFIG_DIR: storedLogin(ada.token, 'unused-refresh-token') }),
      whoami({ SWITCHBOARD_API_KEY: revokedKey }),
      whoami({ SWITCHBOARD_API_KEY: expiredKey }),
      whoami({ SWITCHBOARD_API_KEY: erinKey }),
      whoami({ SWITCHBOARD_API_KEY: unissuedApiKey() }),
      whoami({ SWITCHBOARD_CONFIG_DIR: storedLogin(forgedToken, 'not-a-refresh-token') }),
      whoami({ SWITCHBOARD_CONFIG_DIR: storedLogin(dave.token, dave.refreshToken) }),
      whoami({ SWITCHBOARD_CONFIG_DIR: storedLogin(frank.token, frank.refreshToken) }),
    ]);
    expect(runs.map((run) => run.code)).toEqual([0, 0, 2, 2, 2, 2, 2, 2, 2]);
    expect(JSON.parse(runs[0]!.stdout).user.username).toBe('ada');
    for (const run of runs.slice(2))
      expect(run.stderr).toMatch(/did not accept (SWITCHBOARD_API_KEY|your login \(run `switchboard login [^`]+`\)): UNAUTHORIZED\./);
  });
});

describe('ownership: another user’s session', () => {
  it('control: each owner (and an admin) reaches the session on every way in', async () => {
    // bob is no admin: the admin endpoint and the log stream are not his (refused 403/4003 below).
    const bobWays = bearerWaysIn(hub.base, bobSession).filter(
      (way) => way.takes === 'any' && !way.name.startsWith('WS log stream') && way.name !== 'REST GET /users (admin)',
    );
    const bobSees = await attemptEach(bobWays, bob.token);
    expect(bobSees).toEqual(bobWays.map((way) => way.accepted));
    expect((await request(`${hub.api}/sessions/${bobSession}`, auth(ada.token))).status).toBe(200);
  });

  /** Every REST route of a session; each must answer 404 SESSION_NOT_FOUND to a stranger (no existence leak). */
  const routes: [string, string, unknown?][] = [
    ['GET', ''],
    ['PATCH', '', { name: 'mine now' }],
    ['DELETE', ''],
    ['POST', '/restore'],
    ['GET', '/messages'],
    ['POST', '/messages', { content: 'hello from a stranger' }],
    ['DELETE', '/messages'],
    ['POST', '/cancel'],
    ['GET', '/tools'],
    ['PATCH', '/tools', { enable: ['calculator'] }],
    ['GET', '/memory'],
    ['PATCH', '/memory', { mode: 'code' }],
    ['DELETE', '/memory'],
  ];

  it.each([
    ['a user’s access token', () => bob.token],
    ['a user’s API key', () => bobKey.key],
  ])('refuses %s on someone else’s session: REST 404 SESSION_NOT_FOUND on every route, WS close 4003, log stream 4003', async (name, make) => {
    const credential = make();
    const before = (await request(`${hub.api}/sessions/${adaSession}`, auth(ada.token))).body.data;
    const rest = await Promise.all(
      routes.map(async ([method, suffix, body]) => {
        const init = body === undefined ? auth(credential, method) : json(credential, body, method);
        return [`${method} /sessions/{id}${suffix}`, restObservation(await request(`${hub.api}/sessions/${adaSession}${suffix}`, init))] as const;
      }),
    );
    const socket = await probeSocket(`${hub.ws}/ws/v1/sessions/${adaSession}`, { headers: { authorization: `Bearer ${credential}` } }, 'first-frame');
    const subprotocol = await probeSocket(`${hub.ws}/ws/v1/sessions/${adaSession}`, { protocols: ['bearer', credential] }, 'first-frame');
    const logs = await probeSocket(`${hub.ws}/ws/v1/logs?token=${encodeURIComponent(credential)}`, {}, 'ping');
    const observed = { ...Object.fromEntries(rest), socket, subprotocol, logs };
    for (const [way, answer] of Object.entries(observed))
      attempts.push({ way, name: `${name} on another's session`, observed: answer, accepted: !/^(404|close 4003)/.test(answer) });
    expect(observed).toEqual({
      ...Object.fromEntries(routes.map(([method, suffix]) => [`${method} /sessions/{id}${suffix}`, '404 SESSION_NOT_FOUND'])),
      socket: 'close 4003 not your session',
      subprotocol: 'close 4003 not your session [bearer]',
      logs: 'close 4003 forbidden',
    });
    // Nothing changed, and the answer is the one a session that does not exist gets.
    expect((await request(`${hub.api}/sessions/${adaSession}`, auth(ada.token))).body.data).toEqual(before);
    expect((await request(`${hub.api}/sessions/${adaSession}/messages`, auth(ada.token))).body.data.total).toBe(0);
    const missing = '00000000-0000-4000-8000-000000000000';
    const strangers = await request(`${hub.api}/sessions/${adaSession}`, auth(credential));
    const nobodys = await request(`${hub.api}/sessions/${missing}`, auth(credential));
    expect(strangers.body.error.message.replace(adaSession, 'ID')).toBe(nobodys.body.error.message.replace(missing, 'ID'));
    const listed = await request(`${hub.api}/sessions`, auth(credential));
    expect(listed.body.data.items.map((session: { id: string }) => session.id)).toEqual([bobSession]);
  });

  it('refuses a user revoking someone else’s API key (404 NOT_FOUND), and the key keeps working', async () => {
    const revoke = await request(`${hub.api}/auth/api-keys/${adaKey.id}`, auth(bob.token, 'DELETE'));
    attempts.push({ way: 'REST DELETE /auth/api-keys/{id}', name: 'another user’s key', observed: restObservation(revoke), accepted: revoke.status < 400 });
    expect(restObservation(revoke)).toBe('404 NOT_FOUND');
    expect((await request(`${hub.api}/auth/me`, { headers: { 'x-api-key': adaKey.key } })).status).toBe(200);
  });
});

describe('SAML assertion consumer', () => {
  const attacker = createTestIdp('https://idp.example.test'); // the same entity ID, another key
  let dtdServer: Server;
  let dtdFetches = 0;
  let dtdUrl: string;

  beforeAll(async () => {
    dtdServer = createServer((_request, response) => {
      dtdFetches += 1;
      response.end('<!ENTITY x "fetched">');
    });
    await new Promise<void>((resolve) => dtdServer.listen(0, '127.0.0.1', resolve));
    dtdUrl = `http://127.0.0.1:${(dtdServer.address() as AddressInfo).port}/evil.dtd`;
  });
  afterAll(() => new Promise<void>((resolve) => dtdServer.close(() => resolve())));

  let counter = 0;
  const email = (label: string) => `${label}${(counter += 1)}@corp.example.test`;

  async function refused(name: string, xml: string): Promise<string> {
    const response = await saml.post(xml);
    const observed = restObservation(response);
    attempts.push({ way: 'POST /auth/saml/acs', name, observed, accepted: response.status < 400 });
    return observed === '401 UNAUTHORIZED' && response.body.error.message === 'The SAML response is not valid.' ? 'refused' : observed;
  }

  it('control: a genuine response is accepted once, and its token works on every way in', async () => {
    const accepted = await saml.post(await saml.genuine(email('sso'), { role: 'admin' }));
    expect(accepted.status).toBe(200);
    const token = accepted.body.data.access_token as string;
    const session = await newSession(token);
    const samlWays = bearerWaysIn(hub.base, session).filter((way) => way.takes === 'any');
    expect(await attemptEach(samlWays, token)).toEqual(samlWays.map((way) => way.accepted));
  });

  it('refuses a replay: the same response again, and its signed assertion in a fresh response', async () => {
    const options = await saml.options(email('replay'));
    const signed = saml.signedAssertion(options);
    const original = saml.responseXml(signed, options.inResponseTo);
    expect((await saml.post(original)).status).toBe(200); // control
    expect(await refused('replayed response', original)).toBe('refused');
    expect(await refused('replayed assertion, new Response answering a new request', saml.responseXml(signed, await saml.startLogin()))).toBe('refused');
  });

  it.each([
    ['another audience', { audience: 'some-other-sp' }],
    ['another recipient', { recipient: 'https://evil.example.test/api/v1/auth/saml/acs' }],
    ['an expired assertion', { validForS: -120 }],
    ['another issuer', { issuer: 'https://other-idp.example.test' }],
    ['an InResponseTo the hub never sent', { inResponseTo: '_never-sent' }],
    ['no InResponseTo (IdP-initiated, not enabled)', { inResponseTo: undefined }],
  ])('refuses %s (signed by the IdP)', async (name, overrides) => {
    const options = await saml.options(email('bad'), overrides);
    expect(await refused(name, saml.responseXml(saml.signedAssertion(options), options.inResponseTo))).toBe('refused');
  });

  it('refuses an unsigned assertion and one signed by another key', async () => {
    const unsigned = await saml.options(email('unsigned'));
    expect(await refused('unsigned', saml.responseXml(saml.unsignedAssertion(unsigned), unsigned.inResponseTo))).toBe('refused');
    const other = await saml.options(email('otherkey'));
    expect(await refused('signed by another key', saml.responseXml(saml.signedAssertion(other, attacker), other.inResponseTo))).toBe('refused');
  });

  it.each(Object.keys(WRAPPINGS))('never honours the forged assertion of a wrapped signature: %s', async (variant) => {
    const inResponseTo = await saml.startLogin();
    // Mallory has an account at the IdP; her genuine assertion carries a forged one for ada (admin).
    const mallory = email('mallory');
    const genuine = saml.signedAssertion({ email: mallory, audience: SP_ENTITY_ID, recipient: ACS_URL, inResponseTo });
    const forged = saml.unsignedAssertion({ email: 'ada@example.com', audience: SP_ENTITY_ID, recipient: ACS_URL, inResponseTo, role: 'admin' });
    const response = await saml.post(WRAPPINGS[variant]!({ inResponseTo, genuine, forged }, saml));
    let outcome = restObservation(response) === '401 UNAUTHORIZED' ? 'refused' : restObservation(response);
    if (response.status === 200) {
      // Junk beside a valid signature may be ignored: then the login is the signed one, Mallory's own.
      const me = (await request(`${hub.api}/auth/me`, auth(response.body.data.access_token))).body.data;
      outcome = me.email === mallory && me.role === 'user' ? 'the signed identity only' : `logged in as ${me.email} (${me.role})`;
    }
    attempts.push({
      way: 'POST /auth/saml/acs',
      name: `XSW: ${variant}`,
      observed: outcome,
      accepted: !['refused', 'the signed identity only'].includes(outcome),
    });
    expect(['refused', 'the signed identity only']).toContain(outcome);
  });

  it('logs in as the address the IdP signed when a comment splits it, never as the user the comment cuts it to', async () => {
    const options = await saml.options('ada@example.com.evil.test');
    const signed = saml.signedAssertion(options).replaceAll('ada@example.com.evil.test', 'ada@example.com<!---->.evil.test');
    const response = await saml.post(saml.responseXml(signed, options.inResponseTo));
    if (response.status === 200) {
      const me = await request(`${hub.api}/auth/me`, auth(response.body.data.access_token));
      expect(me.body.data.id).not.toBe(ada.id);
      expect(me.body.data.email).toBe('ada@example.com.evil.test');
    } else {
      expect(restObservation(response)).toBe('401 UNAUTHORIZED');
    }
  });

  describe('documents with a DTD (refused before parsing: docs/decisions.md, Auth)', () => {
    it.each([
      ['a genuine signed response behind a bare DOCTYPE', async () => doctype('') + (await saml.genuine(email('dtd')))],
      ['a genuine signed response behind a DOCTYPE declaring an unused entity', async () => doctype('<!ENTITY x "y">') + (await saml.genuine(email('dtd')))],
      [
        'an external entity (XXE) reading a local file into the NameID',
        async () => {
          const options = await saml.options(email('xxe'));
          return (
            doctype('<!ENTITY x SYSTEM "file:///etc/hostname">') +
            saml.responseXml(saml.signedAssertion(options).replace(/(<saml:NameID[^>]*>)[^<]*/, '$1&x;'), options.inResponseTo)
          );
        },
      ],
      ['an external DTD by URL', async () => `<!DOCTYPE samlp:Response SYSTEM "${dtdUrl}">` + (await saml.genuine(email('dtd')))],
      ['an out-of-band parameter entity', async () => doctype(`<!ENTITY % p SYSTEM "${dtdUrl}"> %p;`) + (await saml.genuine(email('dtd')))],
      [
        'entity expansion (billion laughs)',
        async () => {
          const options = await saml.options(email('laughs'));
          return (
            doctype(BILLION_LAUGHS) + saml.responseXml(saml.signedAssertion(options).replace(/(<saml:NameID[^>]*>)[^<]*/, '$1&l10;'), options.inResponseTo)
          );
        },
      ],
      [
        'an internal entity standing for the signed address',
        async () => {
          const address = email('entity');
          const options = await saml.options(address);
          return (
            doctype(`<!ENTITY who "${address}">`) + saml.responseXml(saml.signedAssertion(options).replaceAll(`>${address}<`, '>&who;<'), options.inResponseTo)
          );
        },
      ],
    ])('refuses %s', async (name, make) => {
      expect(await refused(`DTD: ${name}`, await make())).toBe('refused');
      expect(dtdFetches).toBe(0);
      expect((await request(`${hub.api}/health`)).status).toBe(200);
    });
  });
});

describe('Slack and Telegram webhooks', () => {
  const slackMessage = (text: string) => ({ type: 'message', channel: 'D0RELIABLE', channel_type: 'im', user: 'U0ADA', text, ts: `${nowS()}.000100` });

  /** Messages taken in from a forged request (their text starts `forged:`). */
  async function storedForgeries(): Promise<number> {
    return (await db.query(`SELECT count(*)::int AS n FROM messages WHERE content LIKE 'forged:%'`)).rows[0].n as number;
  }

  async function postSlack(endpoint: 'events' | 'interactions', body: string, headers: Record<string, string>): Promise<string> {
    return restObservation(await request(`${hub.api}/channels/slack/${endpoint}`, { method: 'POST', headers, body }));
  }

  it('control: a correctly signed Slack event and Telegram update are taken in (200)', async () => {
    enqueuePlainReplies(hub.model, 2);
    const body = hub.slackEventBody(slackMessage('hello from Slack'));
    expect(await postSlack('events', body, hub.slackHeaders(body))).toBe('200');
    expect((await hub.telegramUpdate(telegramTextUpdate('hello from Telegram'), hub.secrets.telegramWebhookSecret)).status).toBe(200);
  });

  it('refuses Slack requests whose signature is not the hub’s, on both endpoints (401 UNAUTHORIZED, nothing stored)', async () => {
    const cases: [string, (body: string) => Record<string, string>][] = [
      ['signed with another secret', (body) => hub.slackHeaders(body, { secret: 'not-the-signing-secret' })],
      ['older than five minutes (a replay)', (body) => hub.slackHeaders(body, { timestamp: nowS() - 6 * 60 })],
      ['no signature', (body) => ({ ...hub.slackHeaders(body), 'x-slack-signature': '' })],
      [
        'no timestamp',
        (body) => {
          const { 'x-slack-request-timestamp': _dropped, ...rest } = hub.slackHeaders(body);
          return rest;
        },
      ],
      ['signature of another body', () => hub.slackHeaders(hub.slackEventBody(slackMessage('what was signed')))],
      [
        'an unknown signature version (v1) with the right HMAC',
        (body) => {
          const headers = hub.slackHeaders(body);
          return { ...headers, 'x-slack-signature': headers['x-slack-signature']!.replace(/^v0=/, 'v1=') };
        },
      ],
    ];
    const observed: Record<string, string> = {};
    for (const [name, headers] of cases) {
      const event = hub.slackEventBody(slackMessage(`forged: ${name}`));
      const interaction = `payload=${encodeURIComponent(JSON.stringify({ type: 'block_actions', team: { id: 'T1' }, user: { id: 'U0ADA' }, actions: [{ action_id: 'sb_confirm:x', value: 'allow' }] }))}`;
      observed[`events: ${name}`] = await postSlack('events', event, headers(event));
      observed[`interactions: ${name}`] = await postSlack('interactions', interaction, {
        ...headers(interaction),
        'content-type': 'application/x-www-form-urlencoded',
      });
    }
    for (const [name, answer] of Object.entries(observed)) attempts.push({ way: 'POST /channels/slack/*', name, observed: answer, accepted: answer === '200' });
    expect(observed).toEqual(Object.fromEntries(Object.keys(observed).map((name) => [name, '401 UNAUTHORIZED'])));
    expect(await storedForgeries()).toBe(0);
  });

  it('refuses Telegram updates without the exact secret header (401 UNAUTHORIZED, nothing stored)', async () => {
    const secret = hub.secrets.telegramWebhookSecret;
    const forged = () => telegramTextUpdate('forged: a Telegram update');
    const cases: [string, () => Promise<string>][] = [
      ['no secret header', async () => restObservation(await hub.telegramUpdate(forged(), null))],
      ['a wrong secret', async () => restObservation(await hub.telegramUpdate(forged(), 'not-the-secret'))],
      ['the secret with a character added', async () => restObservation(await hub.telegramUpdate(forged(), `${secret}x`))],
      ['the secret less its last character', async () => restObservation(await hub.telegramUpdate(forged(), secret.slice(0, -1)))],
      ['the secret in another case', async () => restObservation(await hub.telegramUpdate(forged(), secret.toUpperCase()))],
      [
        'the secret in the query string instead of the header',
        async () => restObservation(await request(`${hub.api}/channels/telegram/webhook?secret_token=${secret}`, jsonBody(forged()))),
      ],
      ['the bot token instead of the secret', async () => restObservation(await hub.telegramUpdate(forged(), hub.secrets.telegramBotToken))],
    ];
    const observed = Object.fromEntries(await Promise.all(cases.map(async ([name, attempt]) => [name, await attempt()] as const)));
    for (const [name, answer] of Object.entries(observed))
      attempts.push({ way: 'POST /channels/telegram/webhook', name, observed: answer, accepted: answer === '200' });
    expect(observed).toEqual(Object.fromEntries(cases.map(([name]) => [name, '401 UNAUTHORIZED'])));
    expect(await storedForgeries()).toBe(0);
  });
});

describe('webchat session ids (the widget’s only credential)', () => {
  /** Connects like rasa-webchat, asks for `claimed`, and returns the id the hub confirmed. */
  function confirmedId(claimed: string | null): Promise<string> {
    const socket = io(hub.base, { path: '/socket.io/', forceNew: true, reconnection: false, transports: ['websocket'] });
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('no session_confirm')), 5_000);
      socket.once('connect_error', reject);
      socket.once('session_confirm', (id: unknown) => {
        clearTimeout(timer);
        socket.close();
        resolve(typeof id === 'object' && id !== null ? (id as { session_id: string }).session_id : (id as string));
      });
      socket.on('connect', () => socket.emit('session_request', { session_id: claimed }));
    });
  }

  it('control: the hub takes back an id it issued; it never hands out a claimed id it did not sign', async () => {
    const first = await confirmedId(null);
    const second = await confirmedId(null);
    expect(await confirmedId(first)).toBe(first);
    const claims: [string, string][] = [
      ['an id the hub never issued', 'ab'.repeat(32)],
      ['a conversation with another conversation’s signature', first.slice(0, 32) + second.slice(32)],
      ['an issued id with one signature character changed', first.slice(0, -1) + (first.endsWith('0') ? '1' : '0')],
      ['an issued conversation with the signature cut off', first.slice(0, 32)],
    ];
    for (const [name, claimed] of claims) {
      const given = await confirmedId(claimed);
      attempts.push({
        way: 'webchat session_request',
        name,
        observed: given === claimed ? 'taken' : 'fresh id',
        accepted: given.slice(0, 32) === claimed.slice(0, 32),
      });
      expect({ name, conversation: given.slice(0, 32) }).not.toEqual({ name, conversation: claimed.slice(0, 32) });
    }
  });
});

describe('metrics token (a platform secret)', () => {
  it('opens /metrics only with SERVICE_METRICS_TOKEN, never with a user credential', async () => {
    const scrape = async (authorization?: string) => restObservation(await request(`${hub.base}/metrics`, authorization ? { headers: { authorization } } : {}));
    expect(await scrape(`Bearer ${hub.secrets.metricsToken}`)).toBe('200'); // control
    const observed = {
      none: await scrape(),
      'an admin’s access token': await scrape(`Bearer ${ada.token}`),
      'an admin’s API key': await scrape(`Bearer ${adaKey.key}`),
      'the token less its last character': await scrape(`Bearer ${hub.secrets.metricsToken.slice(0, -1)}`),
      'the JWT secret': await scrape(`Bearer ${hub.secrets.jwtSecret}`),
    };
    for (const [name, answer] of Object.entries(observed)) attempts.push({ way: 'GET /metrics', name, observed: answer, accepted: answer === '200' });
    expect(observed).toEqual(Object.fromEntries(Object.keys(observed).map((name) => [name, '401 UNAUTHORIZED'])));
  });
});

describe('random damage to genuine credentials (fast-check)', () => {
  const runs = scaled(150, 3000);
  const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.';
  /** One to three characters of `value` replaced, inserted or deleted; never `value` itself. */
  const damaged = (value: string) =>
    fc
      .array(fc.record({ at: fc.nat(value.length), kind: fc.constantFrom('replace', 'insert', 'delete'), char: fc.constantFrom(...BASE64URL) }), {
        minLength: 1,
        maxLength: 3,
      })
      .map((edits) =>
        edits.reduce((text, edit) => {
          const at = Math.min(edit.at, text.length - 1);
          if (edit.kind === 'insert') return text.slice(0, at) + edit.char + text.slice(at);
          if (edit.kind === 'delete') return text.slice(0, at) + text.slice(at + 1);
          return text.slice(0, at) + edit.char + text.slice(at + 1);
        }, value),
      )
      .filter((text) => text !== value);

  it.each([
    ['an access token the hub issued', () => ada.token],
    ['an API key', () => adaKey.key],
  ])(`refuses ${runs} random edits of %s (401 UNAUTHORIZED), while the genuine one works`, async (name, genuine) => {
    expect(restObservation(await request(`${hub.api}/auth/me`, auth(genuine())))).toBe('200');
    await fc.assert(
      fc.asyncProperty(damaged(genuine()), async (credential) => {
        const observed = restObservation(await request(`${hub.api}/auth/me`, auth(credential)));
        attempts.push({ way: 'REST GET /auth/me (CLI whoami)', name: `damaged ${name}`, observed, accepted: observed === '200' });
        expect(observed).toBe('401 UNAUTHORIZED');
      }),
      { numRuns: runs },
    );
  });
});

it('accepted none of the forged, revoked or borrowed credentials (run last)', () => {
  expect(attempts.length).toBeGreaterThan(300);
  expect(attempts.filter((attempt) => attempt.accepted)).toEqual([]);
});
