import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import WebSocket from 'ws';
import type { LlmProvider } from '../../src/agent/provider';
import { startService, type RunningService } from '../../src/main';

/** So benchmarks measure the hub, not the limiter refusing them (every route counts under these). */
export const UNTHROTTLED = '1000000/second';

/** The environment every benchmarked hub starts with; `extra` adds drivers (Redis, PostgreSQL). */
export function benchEnv(dataDir: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    SERVICE_JWT_SECRET: randomBytes(32).toString('hex'),
    SERVICE_HOST: '127.0.0.1',
    SERVICE_PORT: '0',
    SERVICE_DATA_DIR: dataDir,
    SERVICE_LOG_LEVEL: 'silent',
    SERVICE_LOG_FORMAT: 'json',
    SERVICE_RATE_LIMIT_DEFAULT: UNTHROTTLED,
    SERVICE_RATE_LIMIT_AUTH_REGISTER: UNTHROTTLED,
    SERVICE_RATE_LIMIT_AUTH_LOGIN: UNTHROTTLED,
    ...extra,
  };
}

export interface BenchHub {
  service: RunningService;
  /** http://127.0.0.1:<port>/api/v1 */
  api: string;
  dataDir: string;
  socketUrl(sessionId: string): string;
  stop(): Promise<void>;
}

/** The whole hub in this process (REST, sockets, drivers, embedded worker unless turned off). */
export async function startBenchHub(options: { env?: Record<string, string>; provider?: LlmProvider } = {}): Promise<BenchHub> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'switchboard-bench-'));
  const env = benchEnv(dataDir, options.env);
  let service: RunningService;
  try {
    service = await startService({ env, cwd: dataDir, provider: options.provider, logDestination: discard() });
  } catch (error) {
    rmSync(dataDir, { recursive: true, force: true });
    throw error;
  }
  const base = `http://127.0.0.1:${service.port}`;
  return {
    service,
    api: `${base}/api/v1`,
    dataDir,
    socketUrl: (sessionId) => `ws://127.0.0.1:${service.port}/ws/v1/sessions/${sessionId}`,
    stop: async () => {
      try {
        await service.stop();
      } finally {
        rmSync(dataDir, { recursive: true, force: true });
      }
    },
  };
}

/** Log lines go nowhere (the level is silent anyway; this also keeps pino off stdout). */
function discard(): Writable {
  return new Writable({ write: (_chunk, _encoding, done) => done() });
}

export interface BenchUser {
  id: string;
  token: string;
}

/** Registers a user through the API (the first on a hub is admin) and returns its id and access token. */
export async function registerUser(api: string, username = 'bench'): Promise<BenchUser> {
  const body = await postJson(`${api}/auth/register`, { username, email: `${username}@example.com`, password: `pw-${username}-long-enough` }, 201);
  const data = (body as { data: { access_token: string; user: { id: string } } }).data;
  return { id: data.user.id, token: data.access_token };
}

/** Creates `count` sessions through the API, a few requests at a time; returns their ids. */
export async function createSessions(api: string, token: string, count: number, parallel = 16): Promise<string[]> {
  const ids: string[] = [];
  let next = 0;
  const lane = async () => {
    while (next < count) {
      next += 1;
      const body = await postJson(`${api}/sessions`, {}, 201, token);
      ids.push((body as { data: { id: string } }).data.id);
    }
  };
  await Promise.all(Array.from({ length: Math.min(parallel, count) }, lane));
  return ids;
}

export async function postJson(url: string, body: unknown, expected: number, token?: string): Promise<unknown> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (token) headers.authorization = `Bearer ${token}`;
  const response = await fetch(url, { method: 'POST', headers, body: JSON.stringify(body) });
  const text = await response.text();
  if (response.status !== expected) throw new Error(`POST ${url}: expected ${expected}, got ${response.status} ${text.slice(0, 300)}`);
  return JSON.parse(text) as unknown;
}

/** Opens an authenticated session socket; rejects if the server refuses or closes it during the handshake. */
export function openSessionSocket(hub: Pick<BenchHub, 'socketUrl'>, sessionId: string, token: string): Promise<WebSocket> {
  return openSocket(hub.socketUrl(sessionId), { authorization: `Bearer ${token}` });
}

export function openSocket(url: string, headers: Record<string, string> = {}): Promise<WebSocket> {
  const ws = new WebSocket(url, { headers, perMessageDeflate: false });
  // Frames that come in the same read as the handshake are emitted before the caller's code runs
  // again: hold them until the caller listens (the first listener added gets them).
  const early: WebSocket.RawData[] = [];
  const hold = (data: WebSocket.RawData) => early.push(data);
  ws.on('message', hold);
  ws.on('newListener', function release(event: string) {
    if (event !== 'message') return;
    ws.off('newListener', release);
    ws.off('message', hold);
    // nextTick: after the listener is added (this event fires before), before any further I/O.
    process.nextTick(() => {
      for (const data of early.splice(0)) ws.emit('message', data, false);
    });
  });
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve(ws));
    ws.once('unexpected-response', (_request, response) => reject(new Error(`${url}: HTTP ${response.statusCode}`)));
    ws.once('error', reject);
    ws.once('close', (code, reason) => reject(new Error(`${url}: closed ${code} ${reason.toString()}`)));
  });
}

/** Closes sockets and waits for them to be closed (cut after a second if the server does not answer). */
export async function closeSockets(sockets: readonly WebSocket[]): Promise<void> {
  await Promise.all(
    sockets.map(
      (ws) =>
        new Promise<void>((resolve) => {
          if (ws.readyState === WebSocket.CLOSED) return resolve();
          const timer = setTimeout(() => (ws.terminate(), resolve()), 1_000);
          ws.once('close', () => (clearTimeout(timer), resolve()));
          ws.close();
        }),
    ),
  );
}
