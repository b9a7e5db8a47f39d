import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One Bot API call the fake received. */
export interface TelegramCall {
  method: string;
  params: Record<string, any>;
  /** What the fake answered (a sent message carries its `message_id`). */
  result?: any;
  /** The HTTP status it answered with. */
  status?: number;
  /** When it was received (Date.now()). */
  at?: number;
}

/** At most `limit` calls in any `windowMs`. */
export interface FakeWindow {
  limit: number;
  windowMs: number;
}

/** Telegram's flood control, as the fake enforces it when asked (`rateLimit`). */
export interface FakeRateLimits {
  perChat?: FakeWindow;
  /** Chats with a negative id (groups), on top of `perChat`. */
  perGroup?: FakeWindow;
  global?: FakeWindow;
}

/** The calls that put a message into a chat, counted by the rate limit. */
const MESSAGE_METHODS = new Set(['sendMessage', 'editMessageText', 'sendMessageDraft']);
/** Telegram's limit on a message's text. */
const MAX_TEXT = 4096;

/** Longest a `getUpdates` long poll is held by the fake (telegraf asks for 50 s; tests need less). */
const MAX_HOLD_MS = 2000;

/**
 * A fake Telegram Bot API server on a loopback port: `POST /bot<token>/<method>` with JSON or form
 * bodies, answering like the real API (`{ok, result}` / `{ok:false, error_code, description}`).
 * It records every call, holds `getUpdates` until updates are queued, can answer the next call of a
 * method with 429 and `parameters.retry_after`, enforce a rate limit per chat, per group and overall
 * (429 when exceeded), and refuse `sendMessageDraft` as an older or unwilling Bot API would.
 * Stands in for Telegram (an external service).
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
  private readonly texts = new Map<number, string>();
  /** The bot's reactions as they stand, per message (`chat:message`), e.g. 👀 on a message that waits. */
  readonly reactions = new Map<string, string[]>();
  private readonly deleted = new Set<number>();
  private limits: FakeRateLimits = {};
  private readonly sentAt = new Map<string, number[]>();
  /**
   * How `sendMessageDraft` is refused: `unknown-method` answers 404 Not Found (a Bot API before
   * 9.3), `bad-request` answers 400; null accepts drafts in private chats.
   */
  refuseDrafts: 'unknown-method' | 'bad-request' | null = null;
  /** Administrators of each chat, as `getChatMember` answers (issue 30); everyone else is a `member`. */
  readonly chatAdmins = new Map<number, number[]>();
  /** When set, `getChatMember` is refused with this description (400). */
  chatMemberError: string | null = null;
  /** `answerCallbackQuery` is refused as for a query that is too old or answered already. */
  staleCallbackQueries = false;

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

  /** Enforces Telegram's flood control: a message call over a limit is answered 429 with `retry_after`. */
  rateLimit(limits: FakeRateLimits): void {
    this.limits = limits;
    this.sentAt.clear();
  }

  /** Someone deleted the bot's message in the chat: editing it is refused from now on. */
  deleteMessage(messageId: number): void {
    this.deleted.add(messageId);
  }

  /** Calls answered 429 because a rate limit was exceeded (not the ones `floodOnce` scripted). */
  get rateLimited(): TelegramCall[] {
    return this.calls.filter((call) => call.status === 429 && call.result === 'rate limited');
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
    const call: TelegramCall = { method, params, at: Date.now() };
    const flood = this.floods.get(method);
    if (flood !== undefined) {
      this.floods.delete(method);
      return this.refuse(response, call, 429, `Too Many Requests: retry after ${flood}`, { retry_after: flood });
    }
    if (MESSAGE_METHODS.has(method)) {
      const wait = this.overLimit(Number(params.chat_id), call.at!);
      if (wait !== null) {
        const retryAfter = Math.max(1, Math.ceil(wait / 1000));
        call.result = 'rate limited';
        return this.refuse(response, call, 429, `Too Many Requests: retry after ${retryAfter}`, { retry_after: retryAfter });
      }
    }
    const refusal = this.refusal(method, params);
    if (refusal) return this.refuse(response, call, refusal.status, refusal.description);
    const result = await this.answer(method, params);
    if (result === undefined) return this.refuse(response, call, 400, `Bad Request: method ${method} is not faked`);
    call.result = result;
    call.status = 200;
    this.record(call);
    send(response, 200, { ok: true, result });
  }

  private refuse(response: ServerResponse, call: TelegramCall, status: number, description: string, parameters?: Record<string, unknown>): void {
    call.status = status;
    this.record(call);
    send(response, status, { ok: false, error_code: status, description, ...(parameters ? { parameters } : {}) });
  }

  /** What Telegram refuses before doing anything: bad texts, drafts it will not take. */
  private refusal(method: string, params: Record<string, any>): { status: number; description: string } | null {
    if (method === 'getChatMember' && this.chatMemberError) return { status: 400, description: this.chatMemberError };
    if (method === 'answerCallbackQuery' && this.staleCallbackQueries) {
      return { status: 400, description: 'Bad Request: query is too old and response timeout expired or query ID is invalid' };
    }
    if (method === 'sendMessageDraft') {
      if (this.refuseDrafts === 'unknown-method') return { status: 404, description: 'Not Found' };
      if (this.refuseDrafts === 'bad-request') return { status: 400, description: 'Bad Request: drafts are not available for this bot' };
      if (Number(params.chat_id) < 0) return { status: 400, description: 'Bad Request: drafts can be sent to private chats only' };
      if (!Number.isInteger(params.draft_id) || params.draft_id === 0) return { status: 400, description: 'Bad Request: draft_id must be non-zero' };
    }
    if (MESSAGE_METHODS.has(method)) {
      const text = typeof params.text === 'string' ? params.text : '';
      if (text.trim() === '') return { status: 400, description: 'Bad Request: message text is empty' };
      if (text.length > MAX_TEXT) return { status: 400, description: 'Bad Request: message is too long' };
    }
    if (method === 'editMessageText' && this.deleted.has(Number(params.message_id)))
      return { status: 400, description: 'Bad Request: message to edit not found' };
    if (method === 'editMessageText' && this.texts.get(Number(params.message_id)) === params.text) {
      return {
        status: 400,
        description:
          'Bad Request: message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message',
      };
    }
    return null;
  }

  /** Milliseconds until this chat may be sent to again, or null when the call is within every limit. */
  private overLimit(chatId: number, now: number): number | null {
    const windows: [string, FakeWindow | undefined][] = [
      [`chat:${chatId}`, this.limits.perChat],
      [`group:${chatId}`, chatId < 0 ? this.limits.perGroup : undefined],
      ['global', this.limits.global],
    ];
    let wait: number | null = null;
    for (const [key, window] of windows) {
      if (!window) continue;
      const sent = (this.sentAt.get(key) ?? []).filter((at) => at > now - window.windowMs);
      this.sentAt.set(key, sent);
      if (sent.length >= window.limit) wait = Math.max(wait ?? 0, sent[sent.length - window.limit]! + window.windowMs - now);
    }
    if (wait !== null) return wait;
    for (const [key, window] of windows) if (window) this.sentAt.get(key)!.push(now);
    return null;
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
      case 'sendChatAction':
      case 'sendMessageDraft':
        return true;
      case 'setMessageReaction':
        this.reactions.set(
          `${params.chat_id}:${params.message_id}`,
          (params.reaction ?? []).map((reaction: { emoji: string }) => reaction.emoji),
        );
        return true;
      case 'sendMessage': {
        const messageId = this.nextMessageId++;
        this.texts.set(messageId, params.text);
        return { message_id: messageId, date: Math.floor(Date.now() / 1000), chat: chatOf(params.chat_id), from: this.botUser, text: params.text };
      }
      case 'editMessageText':
        this.texts.set(Number(params.message_id), params.text);
        return { message_id: Number(params.message_id), date: Math.floor(Date.now() / 1000), chat: chatOf(params.chat_id), text: params.text };
      case 'getChatMember': {
        const admin = (this.chatAdmins.get(Number(params.chat_id)) ?? []).includes(Number(params.user_id));
        return { status: admin ? 'administrator' : 'member', user: { id: Number(params.user_id), is_bot: false, first_name: 'Someone' } };
      }
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

/** Negative chat ids are groups, as on Telegram. */
function chatOf(chatId: unknown): { id: number; type: string } {
  const id = Number(chatId);
  return { id, type: id < 0 ? 'group' : 'private' };
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
