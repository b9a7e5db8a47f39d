import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocket, WebSocketServer } from 'ws';
import { createDatabaseAuthenticator } from '../../src/auth/authenticator';
import { acceptThenClose, authenticateUpgrade, selectProtocol, WsRefusal, WS_CLOSE } from '../../src/auth/websocket';
import { bearer, register, signTestJwt, startAuthService, type AuthService } from '../helpers/auth-service';
import { jsonBody, request } from '../helpers/http';
import { removeTempDirs } from '../helpers/temp-dir';

/**
 * A minimal authenticated socket server, wired the way the WebSocket issue will wire it:
 * `/session` takes header or subprotocol; `/logs` also `?token=` and requires admin.
 */
let hub: AuthService;
let server: Server;
let wsUrl: string;
let admin: { id: string; token: string };
let user: { id: string; token: string };

beforeAll(async () => {
  hub = await startAuthService();
  const registeredAdmin = await register(hub.api);
  admin = { id: registeredAdmin.body.data.user.id, token: registeredAdmin.body.data.access_token };
  const registeredUser = await register(hub.api);
  user = { id: registeredUser.body.data.user.id, token: registeredUser.body.data.access_token };

  const authenticator = createDatabaseAuthenticator(hub.service.config.auth, hub.database);
  const wss = new WebSocketServer({ noServer: true, handleProtocols: selectProtocol });
  server = createServer();
  server.on('upgrade', (req, socket, head) => {
    const logs = (req.url ?? '').startsWith('/logs');
    authenticateUpgrade(req, authenticator, logs ? { queryToken: true, role: 'admin' } : {}).then(
      ({ principal, protocol }) =>
        wss.handleUpgrade(req, socket, head, (ws) => ws.send(JSON.stringify({ userId: principal.userId, via: principal.via, protocol }))),
      (error: unknown) => {
        if (error instanceof WsRefusal) acceptThenClose(wss, req, socket, head, error.code, error.message);
        else acceptThenClose(wss, req, socket, head, 1011, 'internal error');
      },
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  wsUrl = `ws://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await hub.close();
  removeTempDirs();
});

interface Outcome {
  /** The first message when accepted; null when closed first. */
  message: { userId: string; via: string; protocol: string | null } | null;
  protocol: string;
  closeCode: number;
  closeReason: string;
}

/** Connects with the real `ws` client and reports what happened. */
function connect(path: string, options: { protocols?: string[]; headers?: Record<string, string> } = {}): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(`${wsUrl}${path}`, options.protocols ?? [], { headers: options.headers });
    let message: Outcome['message'] = null;
    socket.on('message', (data) => {
      message = JSON.parse(data.toString());
      socket.close(1000);
    });
    socket.on('close', (code, reason) => resolve({ message, protocol: socket.protocol, closeCode: code, closeReason: reason.toString() }));
    socket.on('error', reject);
  });
}

/** A raw handshake, for what the `ws` client refuses to show (it aborts when no subprotocol is echoed). */
function rawHandshake(path: string, headers: Record<string, string>): Promise<{ status: number; protocol: string | undefined; frame: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`http://${wsUrl.slice('ws://'.length)}${path}`, {
      headers: { connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-version': '13', 'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==', ...headers },
    });
    req.on('upgrade', (response, socket, head) => {
      const finish = (frame: Buffer) => {
        socket.destroy();
        resolve({ status: response.statusCode!, protocol: response.headers['sec-websocket-protocol'] as string | undefined, frame });
      };
      if (head.length > 0) finish(head);
      else socket.once('data', finish);
    });
    req.on('response', (response) => reject(new Error(`no upgrade: ${response.statusCode}`)));
    req.on('error', reject);
    req.end();
  });
}

describe('WebSocket upgrade authentication', () => {
  it('accepts the Authorization header and echoes no subprotocol', async () => {
    const outcome = await connect('/session', { headers: { authorization: `Bearer ${user.token}` } });
    expect(outcome.message).toEqual({ userId: user.id, via: 'jwt', protocol: null });
    expect(outcome.protocol).toBe('');
  });

  it('accepts a lowercase (or any-case) bearer scheme', async () => {
    for (const scheme of ['bearer', 'BEARER', 'bEaReR']) {
      const outcome = await connect('/session', { headers: { authorization: `${scheme} ${user.token}` } });
      expect(outcome.message?.userId).toBe(user.id);
    }
  });

  it('accepts `Sec-WebSocket-Protocol: bearer, <token>` and echoes bearer', async () => {
    const outcome = await connect('/session', { protocols: ['bearer', user.token] });
    expect(outcome.message).toEqual({ userId: user.id, via: 'jwt', protocol: 'bearer' });
    expect(outcome.protocol).toBe('bearer');
  });

  it('echoes the bearer protocol exactly as the client spelled it', async () => {
    const outcome = await connect('/session', { protocols: ['Bearer', user.token] });
    expect(outcome.protocol).toBe('Bearer');
    expect(outcome.message?.userId).toBe(user.id);
  });

  it('when both are present the header wins and no subprotocol is echoed', async () => {
    // Header: the admin; subprotocol: the user. The admin is who connects.
    const both = await rawHandshake('/session', { authorization: `Bearer ${admin.token}`, 'sec-websocket-protocol': `bearer, ${user.token}` });
    expect(both.status).toBe(101);
    expect(both.protocol).toBeUndefined();
    expect(both.frame[0]).toBe(0x81); // a text frame: accepted, not a close frame
    expect(JSON.parse(both.frame.subarray(2).toString()).userId).toBe(admin.id);
    // A bad subprotocol token does not matter when the header is good...
    const badProtocol = await rawHandshake('/session', { authorization: `Bearer ${user.token}`, 'sec-websocket-protocol': 'bearer, not-a-token' });
    expect(JSON.parse(badProtocol.frame.subarray(2).toString()).userId).toBe(user.id);
    // ...and a good one does not rescue a bad header.
    const badHeader = await rawHandshake('/session', { authorization: 'Bearer not-a-token', 'sec-websocket-protocol': `bearer, ${user.token}` });
    expect(badHeader.frame[0]).toBe(0x88); // close frame
    expect(badHeader.frame.readUInt16BE(2)).toBe(WS_CLOSE.UNAUTHORIZED);
    expect(badHeader.protocol).toBeUndefined();
  });

  it('closes 4001 after accepting: bad token, no token, expired token', async () => {
    const bad = await connect('/session', { headers: { authorization: 'Bearer not.a.jwt' } });
    expect([bad.closeCode, bad.message]).toEqual([4001, null]);
    const none = await connect('/session');
    expect(none.closeCode).toBe(4001);
    const expired = signTestJwt({ sub: user.id, role: 'user', typ: 'access', iss: 'switchboard', aud: 'switchboard-api', iat: 1, exp: 2 });
    const late = await connect('/session', { headers: { authorization: `Bearer ${expired}` } });
    expect([late.closeCode, late.closeReason]).toEqual([4001, 'token expired']);
  });

  it('closes 4001 on the subprotocol path too, still echoing bearer so browsers see the code', async () => {
    const outcome = await connect('/session', { protocols: ['bearer', 'not-a-valid-token'] });
    expect(outcome.protocol).toBe('bearer');
    expect(outcome.closeCode).toBe(4001);
  });

  it('never accepts a refresh token', async () => {
    const registered = await register(hub.api);
    const outcome = await connect('/session', { protocols: ['bearer', registered.body.data.refresh_token] });
    expect(outcome.closeCode).toBe(4001);
  });

  it('accepts an API key on both paths, and closes 4001 once it is revoked', async () => {
    const created = await request(`${hub.api}/auth/api-keys`, jsonBody({ label: 'ws' }, { authorization: `Bearer ${user.token}` }));
    const key = created.body.data.key as string;
    expect((await connect('/session', { headers: { authorization: `Bearer ${key}` } })).message).toEqual({ userId: user.id, via: 'api_key', protocol: null });
    expect((await connect('/session', { protocols: ['bearer', key] })).message?.via).toBe('api_key');
    await request(`${hub.api}/auth/api-keys/${created.body.data.id}`, { method: 'DELETE', ...bearer(user.token) });
    expect((await connect('/session', { headers: { authorization: `Bearer ${key}` } })).closeCode).toBe(4001);
  });

  it('closes 4001 for an inactive user', async () => {
    const registered = await register(hub.api);
    const token = registered.body.data.access_token;
    expect((await connect('/session', { headers: { authorization: `Bearer ${token}` } })).message).not.toBeNull();
    const deactivated = await request(`${hub.api}/users/${registered.body.data.user.id}`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${admin.token}` },
      body: JSON.stringify({ is_active: false }),
    });
    expect(deactivated.status).toBe(200);
    expect((await connect('/session', { headers: { authorization: `Bearer ${token}` } })).closeCode).toBe(4001);
  });

  it('closes 4003 when the role is wrong (log stream needs admin)', async () => {
    const outcome = await connect(`/logs?token=${user.token}`);
    expect([outcome.closeCode, outcome.closeReason, outcome.message]).toEqual([4003, 'forbidden', null]);
    const viaHeader = await connect('/logs', { headers: { authorization: `Bearer ${user.token}` } });
    expect(viaHeader.closeCode).toBe(4003);
  });

  it('takes ?token= only where enabled', async () => {
    const logs = await connect(`/logs?token=${admin.token}`);
    expect(logs.message).toEqual({ userId: admin.id, via: 'jwt', protocol: null });
    const session = await connect(`/session?token=${admin.token}`);
    expect([session.closeCode, session.message]).toEqual([4001, null]);
  });
});
