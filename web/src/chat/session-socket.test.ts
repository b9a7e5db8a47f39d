import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { SessionFrame } from '../../../src/protocol/frames';
import { SessionSocket, type SocketStatus } from './session-socket';

/** A WebSocket double the test opens, feeds and closes by hand. */
class FakeSocket {
  static readonly OPEN = 1;
  readyState = 0;
  sent: string[] = [];
  onopen: (() => void) | null = null;
  onmessage: ((event: { data: string }) => void) | null = null;
  onclose: ((event: { code: number; reason: string }) => void) | null = null;
  constructor(
    readonly url: string,
    readonly protocols: string[],
  ) {}
  open() {
    this.readyState = 1;
    this.onopen?.();
  }
  receive(frame: Partial<SessionFrame>) {
    this.onmessage?.({ data: JSON.stringify({ session_id: 's', ts: new Date().toISOString(), payload: {}, ...frame }) });
  }
  send(data: string) {
    this.sent.push(data);
  }
  close(code = 1000, reason = '') {
    this.readyState = 3;
    this.onclose?.({ code, reason });
  }
}

let sockets: FakeSocket[];
let frames: SessionFrame[];
let statuses: SocketStatus[];
let reconnected: number;

function start(refresh = async () => false) {
  const socket = new SessionSocket({
    sessionId: 's-1',
    token: async () => 'token-1',
    refresh,
    onFrame: (frame) => frames.push(frame),
    onStatus: (status) => statuses.push(status),
    onReconnected: () => (reconnected += 1),
    createSocket: (url, protocols) => {
      const fake = new FakeSocket(url, protocols);
      sockets.push(fake);
      return fake as unknown as WebSocket;
    },
  });
  socket.start();
  return socket;
}

const settle = () => vi.advanceTimersByTimeAsync(0);

beforeEach(() => {
  vi.useFakeTimers();
  vi.stubGlobal('WebSocket', FakeSocket);
  sockets = [];
  frames = [];
  statuses = [];
  reconnected = 0;
});

afterEach(() => {
  vi.useRealTimers();
  vi.unstubAllGlobals();
});

describe('SessionSocket', () => {
  it('authenticates with the bearer subprotocol and asks for replay from -1 on page load', async () => {
    start();
    await settle();
    expect(sockets[0]!.protocols).toEqual(['bearer', 'token-1']);
    expect(sockets[0]!.url).toMatch(/\/ws\/v1\/sessions\/s-1\?last_seq=-1$/);
  });

  it('drops frames it has seen, reconnects at once with last_seq, and then asks for history', async () => {
    start();
    await settle();
    sockets[0]!.open();
    sockets[0]!.receive({ type: 'agent_state', seq: 4 });
    sockets[0]!.receive({ type: 'token', seq: 5 });
    sockets[0]!.close(1006);
    await settle();
    expect(sockets[1]!.url).toMatch(/last_seq=5$/);
    sockets[1]!.open();
    sockets[1]!.receive({ type: 'token', seq: 5 }); // replay overlap
    sockets[1]!.receive({ type: 'token', seq: 6 });
    expect(frames.map((frame) => frame.seq)).toEqual([4, 5, 6]);
    expect(reconnected).toBe(1);
  });

  it('pings every 30 seconds while open', async () => {
    start();
    await settle();
    sockets[0]!.open();
    await vi.advanceTimersByTimeAsync(60_000);
    expect(sockets[0]!.sent.map((data) => JSON.parse(data).type)).toEqual(['ping', 'ping']);
  });

  it('backs off and gives up after 10 consecutive failures, saying so', async () => {
    start();
    await settle();
    sockets[0]!.open();
    sockets[0]!.close(1006);
    for (let attempt = 1; attempt <= 10; attempt += 1) {
      await vi.advanceTimersByTimeAsync(30_000);
      sockets.at(-1)!.close(1006); // never opens
    }
    await vi.advanceTimersByTimeAsync(60_000);
    expect(sockets).toHaveLength(11);
    expect(statuses.at(-1)).toEqual({ kind: 'failed', message: expect.stringContaining('10 attempts') });
    const delays = statuses.filter((status) => status.kind === 'reconnecting').map((status) => (status as { inMs: number }).inMs);
    expect(delays).toEqual([0, 1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000, 30000]);
  });

  it('does not fight another tab that took the session over', async () => {
    start();
    await settle();
    sockets[0]!.open();
    sockets[0]!.close(1001, 'replaced by a newer connection');
    await vi.advanceTimersByTimeAsync(60_000);
    expect(sockets).toHaveLength(1);
    expect(statuses.at(-1)).toEqual({ kind: 'replaced' });
  });

  it('does not reconnect after a session_taken_over notice, whatever the close reason', async () => {
    start();
    await settle();
    sockets[0]!.open();
    sockets[0]!.receive({ type: 'session_taken_over' } as unknown as Partial<SessionFrame>);
    sockets[0]!.close(1001, 'going away');
    await vi.advanceTimersByTimeAsync(60_000);
    expect(sockets).toHaveLength(1);
    expect(statuses.at(-1)).toEqual({ kind: 'replaced' });
  });

  it('reconnects after a shutdown (1001 "server shutting down")', async () => {
    start();
    await settle();
    sockets[0]!.open();
    sockets[0]!.close(1001, 'server shutting down');
    await vi.advanceTimersByTimeAsync(1_000);
    expect(sockets).toHaveLength(2);
  });

  it('refreshes the token once on 4001, and stops on 4004', async () => {
    const refresh = vi.fn(async () => true);
    start(refresh);
    await settle();
    sockets[0]!.close(4001, 'unauthorized');
    await settle();
    expect(refresh).toHaveBeenCalledWith('token-1');
    expect(sockets).toHaveLength(2);
    sockets[1]!.close(4004, 'not found');
    await settle();
    expect(statuses.at(-1)).toEqual({ kind: 'ended', code: 4004, message: 'This session does not exist or is archived.' });
    await vi.advanceTimersByTimeAsync(60_000);
    expect(sockets).toHaveLength(2);
  });
});
