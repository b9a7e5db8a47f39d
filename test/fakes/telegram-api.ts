import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One Bot API call the fake received. */
export interface TelegramCall {
  method: string;
  params: Record<string, any>;
  /** What the fake answered (a sent message carries its `message_id`). */
  result?: any;
}

/** Longest a `getUpdates` long poll is held by the fake (telegraf asks for 50 s; tests need less). */
const MAX_HOLD_MS = 2000;

/**
 * A fake Telegram Bot API server on a loopback port: `POST /bot<token>/<method>` with JSON or form
 * bodies, answering like the real API (`{ok, result}` / `{ok:false, error_code, description}`).
 * It records every call, holds `getUpdates` until updates are queued, and can answer the next call
 * of a method with 429 and `parameters.retry_after`. Stands in for Telegram (an external service).
 */
export class FakeTelegramApi {
  readonly calls: TelegramCall[] = [];
  readonly botUser = { id: 4242, is_bot: true, first_name: 'Switchboard', username: 'SwitchboardTestBot' };
  private server: Server | null = null;
  private nextMessageId = 1000;
  private readonly updates: Record<string, unknown>[] = [];
  private waiters: (() => void)[] = [];
  private readonly floods = new Map<string, number>();
  private readonly listeners: (() => void)[] = [];

  /** The one token this bot accepts; change it to simulate a revoked or a corrected token. */
  constructor(public token: string) {}

  get apiRoot(): string {
    const address = this.server!.address() as AddressInfo;
    return `http://127.0.0.1:${address.port}`;
  }

  async start(): Promise<void> {
    this.server = createServer((request, response) => void this.handle(request, response));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
  }

  async stop(): Promise<void> {
    for (const wake of this.waiters.splice(0)) wake();
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
  }

  /** Queues an update for `getUpdates` (long-polling mode). */
  queueUpdate(update: Record<string, unknown>): void {
    this.updates.push(update);
    for (const wake of this.waiters.splice(0)) wake();
  }

  /** The next call of `method` is answered 429 with `retry_after` seconds. */
  floodOnce(method: string, retryAfterS: number): void {
    this.floods.set(method, retryAfterS);
  }

  callsOf(method: string): TelegramCall[] {
    return this.calls.filter((call) => call.method === method);
  }

  /** Resolves once a recorded call satisfies `predicate` (checked on every new call). */
  async waitFor(predicate: (call: TelegramCall) => boolean, timeoutMs = 5000): Promise<TelegramCall> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.calls.find(predicate);
      if (found) return found;
      if (Date.now() > deadline) throw new Error(`no matching Bot API call within ${timeoutMs} ms; calls: ${JSON.stringify(this.calls.map((c) => c.method))}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 50);
        this.listeners.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const match = /^\/bot([^/]+)\/(\w+)$/.exec(request.url ?? '');
    if (!match) return send(response, 404, { ok: false, error_code: 404, description: 'Not Found' });
    // Like Telegram: a well-formed but wrong (or revoked) token is refused with 401.
    if (match[1] !== this.token) {
      this.record({ method: `${match[2]} (401)`, params: {} });
      return send(response, 401, { ok: false, error_code: 401, description: 'Unauthorized' });
    }
    const method = match[2]!;
    const params = await readParams(request);
    const call: TelegramCall = { method, params };
    const flood = this.floods.get(method);
    if (flood !== undefined) {
      this.floods.delete(method);
      this.record(call);
      return send(response, 429, { ok: false, error_code: 429, description: `Too Many Requests: retry after ${flood}`, parameters: { retry_after: flood } });
    }
    const result = await this.answer(method, params);
    call.result = result;
    this.record(call);
    if (result === undefined) return send(response, 400, { ok: false, error_code: 400, description: `Bad Request: method ${method} is not faked` });
    send(response, 200, { ok: true, result });
  }

  private record(call: TelegramCall): void {
    this.calls.push(call);
    for (const notify of this.listeners.splice(0)) notify();
  }

  private async answer(method: string, params: Record<string, any>): Promise<unknown> {
    switch (method) {
      case 'getMe':
        return this.botUser;
      case 'deleteWebhook':
      case 'setWebhook':
      case 'answerCallbackQuery':
        return true;
      case 'sendMessage':
        return { message_id: this.nextMessageId++, date: Math.floor(Date.now() / 1000), chat: { id: Number(params.chat_id), type: 'private' }, from: this.botUser, text: params.text };
      case 'editMessageText':
        return { message_id: Number(params.message_id), date: Math.floor(Date.now() / 1000), chat: { id: Number(params.chat_id), type: 'private' }, text: params.text };
      case 'getUpdates':
        return this.takeUpdates(Number(params.offset ?? 0), Number(params.limit ?? 100), Number(params.timeout ?? 0));
      default:
        return undefined;
    }
  }

  /** Long polling: updates at or after `offset`, waiting for some up to the timeout. */
  private async takeUpdates(offset: number, limit: number, timeoutS: number): Promise<unknown[]> {
    // Like Telegram: asking with an offset confirms (drops) every earlier update.
    while (this.updates.length > 0 && Number(this.updates[0]!.update_id) < offset) this.updates.shift();
    if (this.updates.length === 0 && timeoutS > 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(timeoutS * 1000, MAX_HOLD_MS));
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return this.updates.slice(0, limit);
  }
}

async function readParams(request: IncomingMessage): Promise<Record<string, any>> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const body = Buffer.concat(chunks).toString('utf8');
  if (body === '') return {};
  const type = request.headers['content-type'] ?? '';
  if (type.includes('application/json')) return JSON.parse(body) as Record<string, any>;
  throw new Error(`the fake Bot API only reads JSON bodies (got ${type})`);
}

function send(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify(body));
}
