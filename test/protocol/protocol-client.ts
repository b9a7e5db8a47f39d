import type { ProfileHub } from '../helpers/hub-profiles';
import { request, type JsonResponse } from '../helpers/http';
import { registerUser, type TestUser } from '../helpers/users';
import { openSocket, type TestSocket } from '../helpers/ws-client';

/** How long a turn of the built-in model may take on a loaded machine, across processes. */
export const TURN_TIMEOUT_MS = 30_000;
/** How long one case may take (several turns) on a loaded CI machine: generous, still bounded. */
export const CASE_TIMEOUT_MS = 120_000;

/**
 * A client of one user, speaking only the public protocol: REST to API process A, sockets to API
 * process B (one process when embedded). `other` sends the same REST call to process B, for the
 * cases where what one process does must hold on the other (a revoked key, an archived session).
 */
export class ProtocolClient {
  constructor(
    readonly hub: ProfileHub,
    readonly user: TestUser,
  ) {}

  static async register(hub: ProfileHub, username: string): Promise<ProtocolClient> {
    return new ProtocolClient(hub, await registerUser(hub.api, username));
  }

  get token(): string {
    return this.user.token;
  }

  call(method: string, route: string, body?: unknown, options: { process?: number; headers?: Record<string, string> } = {}): Promise<JsonResponse> {
    const base = options.process === undefined ? this.hub.api : `${this.hub.apis[Math.min(options.process, this.hub.apis.length - 1)]}/api/v1`;
    const headers: Record<string, string> = { authorization: `Bearer ${this.token}`, ...options.headers };
    if (body !== undefined) headers['content-type'] = 'application/json';
    return request(`${base}${route}`, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  }

  get = (route: string) => this.call('GET', route);
  post = (route: string, body: unknown = {}, headers?: Record<string, string>) => this.call('POST', route, body, { headers });
  patch = (route: string, body: unknown) => this.call('PATCH', route, body);
  put = (route: string, body: unknown) => this.call('PUT', route, body);
  delete = (route: string, body?: unknown) => this.call('DELETE', route, body);
  /** The same request on API process B (the one process when embedded). */
  onOther = (method: string, route: string, body?: unknown) => this.call(method, route, body, { process: 1 });

  async newSession(body: Record<string, unknown> = {}): Promise<string> {
    const created = await this.post('/sessions', body);
    if (created.status !== 201) throw new Error(`POST /sessions ${JSON.stringify(body)}: ${created.status} ${JSON.stringify(created.body)}`);
    return created.body.data.id as string;
  }

  /**
   * A session socket, once its on-connect `agent_state` is in: on process B by default (REST goes to
   * A), or on API process `process` (0: A).
   */
  async socket(sessionId: string, query = '', process?: number): Promise<TestSocket> {
    const socket = await this.rawSocket(sessionId, query, process);
    await socket.nextOfType('agent_state', -Infinity, TURN_TIMEOUT_MS);
    return socket;
  }

  /** A session socket as the server leaves it (it may close it at once: 4001, 4003, 4004). */
  rawSocket(sessionId: string, query = '', process?: number, headers: Record<string, string> = { authorization: `Bearer ${this.token}` }): Promise<TestSocket> {
    const base = process === undefined ? this.hub.ws : `${this.hub.apis[Math.min(process, this.hub.apis.length - 1)]!.replace('http', 'ws')}/ws/v1`;
    return openSocket(`${base}/sessions/${sessionId}${query}`, { headers });
  }
}

/** The frame that ended turn `turnId` on `socket`: its `done`, or the `error` that ended it. */
export function turnEnd(socket: TestSocket, turnId: string, timeoutMs = TURN_TIMEOUT_MS): Promise<any> {
  return socket.next(
    (frame) => frame.payload?.turn_id === turnId && (frame.type === 'done' || (frame.type === 'error' && frame.payload.code !== 'WORKER_UNAVAILABLE')),
    timeoutMs,
  );
}

/** Every frame of turn `turnId` the socket got so far, in order. */
export function framesOf(socket: TestSocket, turnId: string): any[] {
  return socket.frames.filter((frame) => frame.payload?.turn_id === turnId);
}

/** Sends a message over REST and waits for its turn's end on `socket`; returns [turn id, end frame]. */
export async function restTurn(
  client: ProtocolClient,
  socket: TestSocket,
  sessionId: string,
  text: string,
  extra: Record<string, unknown> = {},
): Promise<[string, any]> {
  const sent = await client.post(`/sessions/${sessionId}/messages`, { text, ...extra });
  if (sent.status !== 202) throw new Error(`message refused: ${sent.status} ${JSON.stringify(sent.body)}`);
  const turnId = sent.body.data.id as string;
  return [turnId, await turnEnd(socket, turnId)];
}

/** Strictly increasing by one, as a socket must see its frames. */
export function seqsOf(socket: TestSocket): number[] {
  return socket.frames.filter((frame) => typeof frame.seq === 'number').map((frame) => frame.seq as number);
}

export function expectGapless(socket: TestSocket): void {
  const seqs = seqsOf(socket);
  for (let index = 1; index < seqs.length; index += 1) {
    if (seqs[index] !== seqs[index - 1]! + 1) throw new Error(`seq ${seqs[index]} after ${seqs[index - 1]}: ${JSON.stringify(seqs)}`);
  }
}
