import { WebSocket, WebSocketServer } from 'ws';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createDatabaseAuthenticator } from '../../src/auth/authenticator';
import { acceptThenClose, authenticateUpgrade, selectProtocol } from '../../src/auth/websocket';
import { TEST_JWT_SECRET } from '../helpers/env';
import { startAuthService, type AuthService } from '../helpers/auth-service';
import { jsonBody, request, type JsonResponse } from '../helpers/http';
import { removeTempDirs } from '../helpers/temp-dir';

/**
 * Runs the whole auth flow with recognisable secrets, then searches every captured log line (debug
 * level) and every error response for them. A secret in a log or an error message fails here.
 */
let hub: AuthService;

beforeAll(async () => {
  hub = await startAuthService();
});

afterAll(async () => {
  await hub.close();
  removeTempDirs();
});

it('no password, token or key appears in any log line or error response of the auth flow', async () => {
  const password = 'CANARY-password-7f3a9c';
  const newPassword = 'CANARY-newpass-41b2d8';
  const wrongPassword = 'CANARY-wrongpw-c0ffee';
  const secrets: string[] = [password, newPassword, wrongPassword, TEST_JWT_SECRET];
  const errors: JsonResponse[] = [];
  const call = async (path: string, init: RequestInit = {}) => {
    const response = await request(`${hub.api}${path}`, init);
    if (response.status >= 400) errors.push(response);
    return response;
  };
  const auth = (token: string, init: RequestInit = {}) => ({ ...init, headers: { ...(init.headers as object), authorization: `Bearer ${token}` } });

  const registered = await call('/auth/register', jsonBody({ username: 'canary_user', email: 'canary@example.com', password }));
  expect(registered.status).toBe(201);
  const { access_token: access, refresh_token: refresh } = registered.body.data;
  secrets.push(access, refresh);

  await call('/auth/login', jsonBody({ username: 'canary_user', password: wrongPassword }));
  await call('/auth/register', jsonBody({ username: 'x', email: 'bad', password: wrongPassword.slice(0, 5) }));
  const login = await call('/auth/login', jsonBody({ username: 'canary@example.com', password }));
  secrets.push(login.body.data.access_token, login.body.data.refresh_token);

  const refreshed = await call('/auth/refresh', jsonBody({ refresh_token: refresh }));
  secrets.push(refreshed.body.data.access_token, refreshed.body.data.refresh_token);
  await new Promise((resolve) => setTimeout(resolve, 1100));
  await call('/auth/refresh', jsonBody({ refresh_token: refresh })); // reuse: revokes the family, logged nowhere

  const created = await call('/auth/api-keys', auth(access, jsonBody({ label: 'canary key' })));
  const key = created.body.data.key as string;
  secrets.push(key, key.slice(12));
  await call('/auth/me', auth(key));
  await call('/auth/me', { headers: { 'x-api-key': key } });
  await call('/auth/me', { headers: { 'x-api-key': `${key.slice(0, -3)}zzz` } });
  await call('/auth/me', auth(`${access}tampered`));
  await call('/auth/me?token=' + access);
  await call('/auth/change-password', auth(access, jsonBody({ current_password: wrongPassword, new_password: newPassword })));
  const changed = await call('/auth/change-password', auth(access, jsonBody({ current_password: password, new_password: newPassword })));
  secrets.push(changed.body.data.access_token, changed.body.data.refresh_token);
  await call('/auth/logout', jsonBody({ refresh_token: changed.body.data.refresh_token }));
  await call('/auth/logout-all', auth(changed.body.data.access_token, { method: 'POST' }));
  await call(`/auth/api-keys/${created.body.data.id}`, auth(key, { method: 'DELETE' }));
  await call('/auth/me', auth(key));

  // The WebSocket path logs through the same logger as the application would.
  const authenticator = createDatabaseAuthenticator(hub.service.config.auth, hub.database);
  const wss = new WebSocketServer({ noServer: true, handleProtocols: selectProtocol });
  const server = createServer();
  server.on('upgrade', (req, socket, head) => {
    authenticateUpgrade(req, authenticator).then(
      () => acceptThenClose(wss, req, socket, head, 1000, 'ok'),
      (error: Error) => {
        hub.service.logger.info({ err: error, headers: req.headers }, 'websocket refused');
        acceptThenClose(wss, req, socket, head, 4001, error.message);
      },
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const closed = await new Promise<number>((resolve) => {
    const socket = new WebSocket(`ws://127.0.0.1:${(server.address() as AddressInfo).port}/`, ['bearer', key]);
    socket.on('close', (code) => resolve(code));
  });
  expect(closed).toBe(4001); // the key was revoked above
  await new Promise((resolve) => server.close(resolve));

  hub.service.logger.flush();
  expect(hub.logs.lines.length).toBeGreaterThan(20); // the flow was logged (request lines at least)
  expect(errors.map((response) => response.status)).toEqual([401, 422, 401, 401, 401, 401, 422, 401]);
  const haystacks = { logs: hub.logs.text, errors: JSON.stringify(errors.map((response) => response.body)) };
  for (const [where, text] of Object.entries(haystacks)) {
    const leaked = secrets.filter((secret) => text.includes(secret));
    expect({ where, leaked }).toEqual({ where, leaked: [] });
  }
  expect(hub.logs.text).not.toContain('CANARY');
});
