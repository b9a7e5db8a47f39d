import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One Web API call the fake received: the method and its arguments (form fields JSON-decoded). */
export interface SlackApiCall {
  method: string;
  args: Record<string, any>;
  /** The bearer token it came with. */
  token: string | null;
}

/** The fake workspace's identity, as auth.test answers it. */
export const FAKE_SLACK = { teamId: 'T1', botUserId: 'UBOT', botId: 'B1' } as const;

/**
 * A Slack Web API on a loopback port, speaking the real wire format (POST /api/<method>, form or
 * JSON bodies, `{ok: …}` answers) so the real @slack/web-api client inside bolt talks to it.
 * It records every call and can answer a method with 429 + Retry-After once.
 */
export class FakeSlackApi {
  readonly calls: SlackApiCall[] = [];
  /** Display names users.info answers, by user id. */
  readonly names = new Map<string, string>();
  /** Tokens answered `invalid_auth` (as Slack answers a wrong or revoked token: HTTP 200, `ok: false`). */
  readonly refusedTokens = new Set<string>();
  private readonly rateLimited = new Map<string, number>();
  private nextTs = 1_700_000_000_000_100;
  private server: Server | null = null;
  url = '';

  async start(): Promise<void> {
    this.server = createServer((request, response) => {
      void readBody(request).then((body) => {
        const method = (request.url ?? '').replace(/^\/api\//, '').split('?')[0]!;
        const retryAfter = this.rateLimited.get(method);
        if (retryAfter !== undefined) {
          this.rateLimited.delete(method);
          this.calls.push({ method: `${method} (429)`, args: parseArgs(request, body), token: bearer(request) });
          response.writeHead(429, { 'content-type': 'application/json', 'retry-after': String(retryAfter) });
          response.end(JSON.stringify({ ok: false, error: 'ratelimited' }));
          return;
        }
        const args = parseArgs(request, body);
        const token = bearer(request);
        this.calls.push({ method, args, token });
        response.writeHead(200, { 'content-type': 'application/json' });
        const refused = token !== null && this.refusedTokens.has(token);
        response.end(JSON.stringify(refused ? { ok: false, error: 'invalid_auth' } : this.answer(method, args)));
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

  callsOf(method: string): SlackApiCall[] {
    return this.calls.filter((call) => call.method === method);
  }

  /** Waits until a recorded call matches (Slack calls happen after the HTTP ack, asynchronously). */
  async waitFor(predicate: (call: SlackApiCall) => boolean, timeoutMs = 10_000): Promise<SlackApiCall> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.calls.find(predicate);
      if (found) return found;
      if (Date.now() > deadline) throw new Error(`no matching Slack call; got ${JSON.stringify(this.calls.map((c) => [c.method, c.args.text]))}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  private answer(method: string, args: Record<string, any>): Record<string, unknown> {
    switch (method) {
      case 'auth.test':
        return { ok: true, url: 'https://acme.slack.com/', team: 'Acme', user: 'switchboard', team_id: FAKE_SLACK.teamId, user_id: FAKE_SLACK.botUserId, bot_id: FAKE_SLACK.botId };
      case 'users.info': {
        const name = this.names.get(args.user) ?? 'Ada';
        return { ok: true, user: { id: args.user, name: name.toLowerCase(), real_name: name, profile: { display_name: name, real_name: name } } };
      }
      case 'chat.postMessage': {
        const ts = `${Math.floor(this.nextTs / 1_000_000)}.${String(this.nextTs++ % 1_000_000).padStart(6, '0')}`;
        return { ok: true, channel: args.channel, ts, message: { text: args.text, ts, thread_ts: args.thread_ts } };
      }
      case 'chat.update':
        return { ok: true, channel: args.channel, ts: args.ts, text: args.text };
      default:
        return { ok: false, error: 'unknown_method' };
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
