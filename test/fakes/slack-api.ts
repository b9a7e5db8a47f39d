import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SlackWorkspace } from './slack-workspace';

/** One Web API call the fake received: the method and its arguments (form fields JSON-decoded). */
export interface SlackApiCall {
  method: string;
  args: Record<string, any>;
  /** The bearer token it came with. */
  token: string | null;
  /** When it arrived (ms). */
  at: number;
}

/** The fake workspace's identity, as auth.test answers it. */
export const FAKE_SLACK = { teamId: 'T1', botUserId: 'UBOT', botId: 'B1' } as const;

/** The methods that post or change a message: the ones Slack's per-channel limit counts. */
export const MESSAGE_METHODS: ReadonlySet<string> = new Set(['chat.postMessage', 'chat.update', 'chat.startStream', 'chat.appendStream', 'chat.stopStream']);

/** A per-channel limit the fake enforces on message methods: more than `limit` in any `windowMs` is answered 429. */
export interface FakeRateLimit {
  limit: number;
  windowMs: number;
  retryAfterS: number;
}

/**
 * A Slack Web API on a loopback port, speaking the real wire format (POST /api/<method>, form or
 * JSON bodies, `{ok: …}` answers) so the real @slack/web-api client inside bolt talks to it.
 * It records every call, keeps the messages it was sent (streams included: `workspace`), can refuse
 * a method as a workspace without it would (`refuse`), answer a method 429 once (`rateLimitOnce`),
 * and enforce a per-channel rate limit (`rateLimit`), counting the 429s it answered.
 */
export class FakeSlackApi {
  readonly calls: SlackApiCall[] = [];
  /** Display names users.info answers, by user id. */
  readonly names = new Map<string, string>();
  /** Members of each user group, as usergroups.users.list answers them (issue 30). */
  readonly usergroups = new Map<string, string[]>();
  /** Handles of user groups, as usergroups.list answers them, by group id (issue 30). */
  readonly usergroupHandles = new Map<string, string>();
  /** When set, usergroups.list answers this error (`ok: false`, e.g. `missing_scope`). */
  usergroupsListError: string | null = null;
  /** When set, usergroups.users.list answers this error (`ok: false`). */
  usergroupsError: string | null = null;
  /** Tokens answered `invalid_auth` (as Slack answers a wrong or revoked token: HTTP 200, `ok: false`). */
  readonly refusedTokens = new Set<string>();
  /** The messages, streams, thread statuses and suggested prompts the fake was sent. */
  readonly workspace = new SlackWorkspace();
  /** Per-channel limit on message methods (null: none). */
  rateLimit: FakeRateLimit | null = null;
  /** How many calls were answered 429 (by `rateLimit` or `rateLimitOnce`). */
  rateLimitedCount = 0;
  /** HTTP statuses the next calls of a method are answered with, in order (e.g. a 500 once: Slack failing). */
  private readonly failures = new Map<string, number[]>();
  private readonly refusedMethods = new Map<string, string>();
  private readonly rateLimited = new Map<string, number>();
  private readonly sentAt = new Map<string, number[]>();
  private server: Server | null = null;
  url = '';

  async start(): Promise<void> {
    this.server = createServer((request, response) => {
      void readBody(request).then((body) => {
        const method = (request.url ?? '').replace(/^\/api\//, '').split('?')[0]!;
        const args = parseArgs(request, body);
        const token = bearer(request);
        const retryAfter = this.retryAfterFor(method, args);
        if (retryAfter !== null) {
          this.rateLimitedCount += 1;
          this.calls.push({ method: `${method} (429)`, args, token, at: Date.now() });
          response.writeHead(429, { 'content-type': 'application/json', 'retry-after': String(retryAfter) });
          response.end(JSON.stringify({ ok: false, error: 'ratelimited' }));
          return;
        }
        const failure = this.failures.get(method)?.shift();
        if (failure !== undefined) {
          this.calls.push({ method: `${method} (${failure})`, args, token, at: Date.now() });
          response.writeHead(failure, { 'content-type': 'text/plain' });
          response.end('upstream failure');
          return;
        }
        this.calls.push({ method, args, token, at: Date.now() });
        response.writeHead(200, { 'content-type': 'application/json' });
        const refused = token !== null && this.refusedTokens.has(token);
        const refusal = this.refusedMethods.get(method);
        const answer = refused ? { ok: false, error: 'invalid_auth' } : refusal ? { ok: false, error: refusal } : this.answer(method, args);
        response.end(JSON.stringify(answer));
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/api/`;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  /** The next call of `method` is answered 429 with this Retry-After (seconds). */
  rateLimitOnce(method: string, retryAfterS: number): void {
    this.rateLimited.set(method, retryAfterS);
  }

  /** The next calls of `method` are answered with these HTTP statuses, one each (e.g. `[500]`), before it works again. */
  failNext(method: string, statuses: number[]): void {
    this.failures.set(method, [...statuses]);
  }

  /** Answers `method` with `ok: false, error` (e.g. `unknown_method`, `not_allowed_token_type`) until `allow`. */
  refuse(method: string, error: string): void {
    this.refusedMethods.set(method, error);
  }

  allow(method: string): void {
    this.refusedMethods.delete(method);
  }

  callsOf(method: string): SlackApiCall[] {
    return this.calls.filter((call) => call.method === method);
  }

  /** Waits until a recorded call matches (Slack calls happen after the HTTP ack, asynchronously). */
  async waitFor(predicate: (call: SlackApiCall) => boolean, timeoutMs = 10_000): Promise<SlackApiCall> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.calls.find(predicate);
      if (found) return found;
      if (Date.now() > deadline)
        throw new Error(
          `no matching Slack call; got ${JSON.stringify(this.calls.map((c) => [c.method, c.args.text ?? c.args.markdown_text ?? c.args.status]))}`,
        );
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  /** Waits until a finished message (not a running stream) in `channel` reads exactly `text`. */
  async waitForReply(channel: string, text: string, timeoutMs = 10_000) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.workspace.messagesIn(channel).find((message) => !message.streaming && message.text === text);
      if (found) return found;
      if (Date.now() > deadline) throw new Error(`no reply "${text}" in ${channel}; messages: ${JSON.stringify(this.workspace.messagesIn(channel))}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  private retryAfterFor(method: string, args: Record<string, any>): number | null {
    const once = this.rateLimited.get(method);
    if (once !== undefined) {
      this.rateLimited.delete(method);
      return once;
    }
    const channel = args.channel;
    if (!this.rateLimit || !MESSAGE_METHODS.has(method) || typeof channel !== 'string') return null;
    const now = Date.now();
    const sent = (this.sentAt.get(channel) ?? []).filter((at) => at > now - this.rateLimit!.windowMs);
    if (sent.length >= this.rateLimit.limit) {
      this.sentAt.set(channel, sent);
      return this.rateLimit.retryAfterS;
    }
    sent.push(now);
    this.sentAt.set(channel, sent);
    return null;
  }

  private answer(method: string, args: Record<string, any>): Record<string, unknown> {
    switch (method) {
      case 'auth.test':
        return {
          ok: true,
          url: 'https://acme.slack.com/',
          team: 'Acme',
          user: 'switchboard',
          team_id: FAKE_SLACK.teamId,
          user_id: FAKE_SLACK.botUserId,
          bot_id: FAKE_SLACK.botId,
        };
      case 'users.info': {
        const name = this.names.get(args.user) ?? 'Ada';
        return { ok: true, user: { id: args.user, name: name.toLowerCase(), real_name: name, profile: { display_name: name, real_name: name } } };
      }
      case 'usergroups.list': {
        if (this.usergroupsListError) return { ok: false, error: this.usergroupsListError };
        const usergroups = [...this.usergroupHandles].map(([id, handle]) => ({ id, handle, name: handle, date_delete: 0 }));
        return { ok: true, usergroups };
      }
      case 'usergroups.users.list': {
        if (this.usergroupsError) return { ok: false, error: this.usergroupsError };
        const users = this.usergroups.get(args.usergroup);
        return users ? { ok: true, users } : { ok: false, error: 'no_such_subteam' };
      }
      default:
        return this.workspace.answer(method, args);
    }
  }
}

function bearer(request: IncomingMessage): string | null {
  const header = request.headers.authorization;
  return header?.startsWith('Bearer ') ? header.slice('Bearer '.length) : null;
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

/** Form fields as the client sends them: nested values (blocks) arrive JSON-encoded. */
function parseArgs(request: IncomingMessage, body: string): Record<string, any> {
  if (body === '') return {};
  if ((request.headers['content-type'] ?? '').includes('application/json')) return JSON.parse(body);
  const args: Record<string, any> = {};
  for (const [key, value] of new URLSearchParams(body)) {
    try {
      args[key] = /^[[{]/.test(value) ? JSON.parse(value) : value;
    } catch {
      args[key] = value;
    }
  }
  return args;
}
