import jwt from 'jsonwebtoken';
import { startService, type RunningService } from '../../src/main';
import { GENEROUS_RATE_LIMITS } from '../helpers/auth-service';
import { TEST_JWT_SECRET, testEnv } from '../helpers/env';
import { jsonBody, request } from '../helpers/http';
import { LogCapture } from '../helpers/log-capture';
import { createTestPostgresDatabase, type TestPostgresDatabase } from '../helpers/postgres';
import { deleteKeys, TEST_REDIS_URL, uniquePrefix } from '../helpers/redis';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir';
import { registerUser, type TestUser } from '../helpers/users';
import { openSocket, type TestSocket } from '../helpers/ws-client';

/**
 * Revoked credentials end what they opened, on every API process: two hubs share PostgreSQL and
 * Redis; the change is made through one, the sockets live on the other.
 */
let database: TestPostgresDatabase;
const prefix = uniquePrefix('revocation');
let one: RunningService;
let two: RunningService;
let admin: TestUser;

const api = (hub: RunningService) => `http://127.0.0.1:${hub.port}/api/v1`;
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

async function startHub(): Promise<RunningService> {
  return startService({
    env: testEnv(makeTempDir(), {
      ...GENEROUS_RATE_LIMITS,
      SERVICE_DATABASE_URL: database.url,
      SERVICE_REDIS_URL: TEST_REDIS_URL,
      SERVICE_REDIS_PREFIX: prefix,
    }),
    cwd: makeTempDir(),
    logDestination: new LogCapture(),
  });
}

/** A session of `token`'s owner and a socket to it on hub two. */
async function sessionSocket(token: string): Promise<TestSocket> {
  const id = (await request(`${api(one)}/sessions`, jsonBody({}, bearer(token)))).body.data.id;
  const socket = await openSocket(`ws://127.0.0.1:${two.port}/ws/v1/sessions/${id}`, { headers: bearer(token) });
  await socket.nextOfType('agent_state');
  return socket;
}

function patchUser(id: string, body: unknown) {
  return request(`${api(one)}/users/${id}`, {
    method: 'PATCH',
    headers: { 'content-type': 'application/json', ...bearer(admin.token) },
    body: JSON.stringify(body),
  });
}

beforeAll(async () => {
  database = await createTestPostgresDatabase();
  one = await startHub();
  two = await startHub();
  admin = await registerUser(api(one), 'root');
});

afterAll(async () => {
  await two.stop();
  await one.stop();
  await database.drop();
  await deleteKeys(prefix);
  removeTempDirs();
});

it('deactivating a user closes their sockets on another process with 4001, and their token stops working', async () => {
  const user = await registerUser(api(one), 'deactivated_user');
  const socket = await sessionSocket(user.token);
  expect((await request(`${api(two)}/auth/me`, { headers: bearer(user.token) })).status).toBe(200); // cached on two now
  expect((await patchUser(user.id, { is_active: false })).status).toBe(200);
  expect((await socket.closed).code).toBe(4001);
  expect((await request(`${api(two)}/auth/me`, { headers: bearer(user.token) })).status).toBe(401);
});

it('revoking an API key closes the sockets that key opened, not the ones a token opened', async () => {
  const user = await registerUser(api(one), 'key_user');
  const created = await request(`${api(one)}/auth/api-keys`, jsonBody({ label: 'script' }, bearer(user.token)));
  const keySocket = await sessionSocket(created.body.data.key);
  const tokenSocket = await sessionSocket(user.token);
  expect((await request(`${api(one)}/auth/api-keys/${created.body.data.id}`, { method: 'DELETE', headers: bearer(user.token) })).status).toBe(204);
  expect((await keySocket.closed).code).toBe(4001);
  expect((await request(`${api(two)}/auth/me`, { headers: bearer(created.body.data.key) })).status).toBe(401);
  tokenSocket.send({ type: 'ping', payload: {} });
  await tokenSocket.nextOfType('pong');
  tokenSocket.close();
});

it('logging out everywhere closes what access tokens opened (API keys live on)', async () => {
  const user = await registerUser(api(one), 'logout_user');
  const created = await request(`${api(one)}/auth/api-keys`, jsonBody({ label: 'script' }, bearer(user.token)));
  const keySocket = await sessionSocket(created.body.data.key);
  const tokenSocket = await sessionSocket(user.token);
  expect((await request(`${api(one)}/auth/logout-all`, { method: 'POST', headers: bearer(user.token) })).status).toBe(204);
  expect((await tokenSocket.closed).code).toBe(4001);
  keySocket.send({ type: 'ping', payload: {} });
  await keySocket.nextOfType('pong');
  keySocket.close();
});

it('demoting an admin closes their log stream with 4003 and their session sockets with 4001', async () => {
  const second = await registerUser(api(one), 'second_admin');
  expect((await patchUser(second.id, { role: 'admin' })).status).toBe(200);
  const logs = await openSocket(`ws://127.0.0.1:${two.port}/ws/v1/logs?token=${second.token}`);
  logs.send('ping');
  await logs.next((frame) => frame.type === 'pong');
  const session = await sessionSocket(second.token);
  expect((await patchUser(second.id, { role: 'user' })).status).toBe(200);
  expect((await logs.closed).code).toBe(4003);
  expect((await session.closed).code).toBe(4001);
});

it('refuses an access token issued an hour in the future (beyond the clock-skew allowance)', async () => {
  const user = await registerUser(api(one), 'future_user');
  const now = Math.floor(Date.now() / 1000);
  const sign = (iat: number) =>
    jwt.sign({ sub: user.id, role: 'user', typ: 'access', iat, exp: iat + 900 }, TEST_JWT_SECRET, {
      algorithm: 'HS256',
      issuer: 'switchboard',
      audience: 'switchboard-api',
    });
  expect((await request(`${api(one)}/auth/me`, { headers: bearer(sign(now + 3600)) })).status).toBe(401);
  expect((await request(`${api(one)}/auth/me`, { headers: bearer(sign(now + 10)) })).status).toBe(200); // within the skew
});
