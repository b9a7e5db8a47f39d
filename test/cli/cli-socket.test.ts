import type { AddressInfo } from 'node:net';
import { WebSocketServer } from 'ws';
import { HubClient } from '../../src/cli/api-client';
import { classifyClose } from '../../src/cli/socket/close-codes';
import { HubSocket } from '../../src/cli/socket/hub-socket';
import { reconnectDelayMs } from '../../src/cli/socket/reconnect-policy';
import type { CliError } from '../../src/cli/exit-codes';

/** A WebSocket server on a free loopback port. */
function listening(): Promise<WebSocketServer> {
  return new Promise((resolve) => {
    const server: WebSocketServer = new WebSocketServer({ port: 0, host: '127.0.0.1' }, () => resolve(server));
  });
}

/** The client side of the spec's reconnection policy, against a real WebSocket server. */
describe('the reconnect policy', () => {
  it('is: at once, then 1, 2, 4, 8, 16 s, capped at 30 s', () => {
    expect(Array.from({ length: 9 }, (_, index) => reconnectDelayMs(index + 1))).toEqual([0, 1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000, 30_000]);
  });

  it('tells passing closes from final ones', () => {
    const wording = { forbidden: 'not yours', notFound: 'no such session' };
    expect(classifyClose(1001, 'server shutting down', wording)).toEqual({ kind: 'retry', why: 'server shutting down' });
    expect(classifyClose(1001, 'replaced by a newer connection', wording).kind).toBe('stop');
    expect(classifyClose(1001, 'taken over by another connection', wording).kind).toBe('stop');
    expect(classifyClose(1006, '', wording).kind).toBe('retry');
    expect(classifyClose(4000, 'server starting', wording).kind).toBe('retry');
    expect(classifyClose(4001, 'token expired', wording)).toEqual({ kind: 'refresh' });
    expect(classifyClose(4001, 'unauthorized', wording).kind).toBe('stop');
    expect(classifyClose(4003, 'forbidden', wording)).toEqual({ kind: 'stop', why: 'not yours' });
    expect(classifyClose(4004, 'session not found', wording)).toEqual({ kind: 'stop', why: 'no such session' });
  });
});

describe('HubSocket', () => {
  it('stops, without reconnecting, after a session_taken_over notice whatever the close reason says', async () => {
    const server = await listening();
    const port = (server.address() as AddressInfo).port;
    let connections = 0;
    server.on('connection', (socket) => {
      connections += 1;
      socket.send(JSON.stringify({ type: 'agent_state', session_id: 's', seq: 1, ts: new Date().toISOString(), payload: { state: 'idle' } }));
      socket.send(JSON.stringify({ type: 'session_taken_over', session_id: 's', payload: {}, ts: new Date().toISOString() }));
      socket.close(1001, 'going away'); // a reason this client would otherwise retry after
    });
    const client = new HubClient(`http://127.0.0.1:${port}`, { kind: 'api-key', key: 'svc_live_test' });
    const messages: string[] = [];
    const retries: number[] = [];
    const stopped = await new Promise<CliError>((resolve) => {
      new HubSocket({
        client,
        url: () => `ws://127.0.0.1:${port}/ws/v1/sessions/s`,
        keepaliveText: 'ping',
        readyOn: 'first-message',
        wording: { forbidden: 'f', notFound: 'n' },
        policy: { maxFailures: 3, firstBackoffMs: 20, capMs: 40 },
        listener: { onMessage: (text) => messages.push(text), onRetry: ({ attempt }) => retries.push(attempt), onStop: resolve },
      }).start();
    });
    expect(stopped.message).toMatch(/another client connected to this session/);
    expect(retries).toEqual([]);
    expect(connections).toBe(1);
    // The notice is the client's business, not a frame of the session.
    expect(messages.map((text) => JSON.parse(text).type)).toEqual(['agent_state']);
    server.close();
  });

  it('reconnects by the policy with the Authorization header, and gives up after the last failure with a clear message', async () => {
    const server = await listening();
    const port = (server.address() as AddressInfo).port;
    const headers: (string | undefined)[] = [];
    server.on('connection', (socket, request) => {
      headers.push(request.headers.authorization);
      socket.send('hello');
    });
    const client = new HubClient(`http://127.0.0.1:${port}`, { kind: 'api-key', key: 'svc_live_test' });
    const retries: { attempt: number; delayMs: number }[] = [];
    const messages: string[] = [];
    const stopped = new Promise<CliError>((resolve) => {
      const socket = new HubSocket({
        client,
        url: () => `ws://127.0.0.1:${port}/ws/v1/test`,
        keepaliveText: 'ping',
        readyOn: 'first-message',
        wording: { forbidden: 'f', notFound: 'n' },
        policy: { maxFailures: 3, firstBackoffMs: 20, capMs: 40 },
        listener: {
          onMessage: (text) => {
            messages.push(text);
            // The hub goes away for good after the first frame.
            if (messages.length === 1) {
              for (const connected of server.clients) connected.close(1001, 'server shutting down');
              server.close();
            }
          },
          onRetry: ({ attempt, delayMs }) => retries.push({ attempt, delayMs }),
          onStop: resolve,
        },
      });
      socket.start();
    });
    const error = await stopped;
    expect(headers).toEqual(['Bearer svc_live_test']);
    expect(messages).toEqual(['hello']);
    // The drop (attempt 1, at once), then two failed attempts backing off, then the third failure stops.
    expect(retries).toEqual([
      { attempt: 1, delayMs: 0 },
      { attempt: 2, delayMs: 20 },
      { attempt: 3, delayMs: 40 },
    ]);
    expect(error.message).toBe(`Gave up reconnecting to http://127.0.0.1:${port} after 3 failed attempts (last: ECONNREFUSED).`);
    expect(error.exitCode).toBe(2);
  });

  it('a hub that cannot be reached at all stops at once (a wrong --url, not a restart)', async () => {
    const server = await listening();
    const port = (server.address() as AddressInfo).port;
    await new Promise((resolve) => server.close(resolve));
    const client = new HubClient(`http://127.0.0.1:${port}`, { kind: 'api-key', key: 'svc_live_test' });
    const error = await new Promise<CliError>((resolve) =>
      new HubSocket({
        client,
        url: () => `ws://127.0.0.1:${port}/ws/v1/test`,
        keepaliveText: 'ping',
        readyOn: 'open',
        wording: { forbidden: 'f', notFound: 'n' },
        listener: { onMessage: () => undefined, onStop: resolve },
      }).start(),
    );
    expect(error.message).toBe(`Connection to http://127.0.0.1:${port} ended: cannot reach the hub (ECONNREFUSED).`);
  });
});
