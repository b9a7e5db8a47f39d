import { Client4 } from '@mattermost/client';
import type { Post } from '@mattermost/types/posts';
import type { Logger } from 'pino';
import { NO_CHANNEL_TELEMETRY, type ChannelTelemetry } from '../../src/core/telemetry';
import { SendBudget, type SendBudgetLimits } from '../shared/send-budget';

/** Named limits of the REST side (adapters/README.md: every limit a named default). */
export const MATTERMOST_API_LIMITS = {
  /** A write answered 429 goes again at most this many times (after Retry-After). */
  rateLimitRetries: 3,
  /** Longest Retry-After / X-Ratelimit-Reset honoured, in seconds. */
  maxRetryAfterS: 60,
} as const;

/** A REST call Mattermost refused (or that never reached it): the status and Mattermost's own message, never the token. */
export class MattermostCallError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** What a post write sends (`POST /api/v4/posts` or `PUT /api/v4/posts/{id}/patch`). */
export interface PostWrite {
  channel_id: string;
  message?: string;
  root_id?: string;
  props?: Record<string, unknown>;
}

/**
 * The REST v4 side of the channel on the official client (`Client4`): reads through its typed calls,
 * writes (posts and edits) through its routes and headers with the answer's `X-Ratelimit-*` headers
 * read, so every write spends the bot's one send budget and a 429 (or an exhausted limit) pauses it
 * for `Retry-After` / `X-Ratelimit-Reset` — Mattermost limits per user, so the pause is the bot's.
 */
export class MattermostApi {
  readonly client = new Client4();
  private budget: SendBudget;

  constructor(
    url: string,
    token: string,
    private readonly limits: SendBudgetLimits,
    private readonly logger: Logger,
    private readonly telemetry: ChannelTelemetry = NO_CHANNEL_TELEMETRY,
  ) {
    this.client.setUrl(url.replace(/\/+$/, ''));
    this.client.setToken(token);
    this.client.setIncludeCookies(false);
    this.budget = new SendBudget(limits);
  }

  /** A read through Client4; failures become MattermostCallError with Mattermost's reason. */
  async read<T>(what: string, call: (client: Client4) => Promise<T>): Promise<T> {
    const started = performance.now();
    try {
      const value = await call(this.client);
      this.telemetry.platformCall(what, 200, (performance.now() - started) / 1000);
      return value;
    } catch (error) {
      const status = typeof (error as { status_code?: unknown }).status_code === 'number' ? (error as { status_code: number }).status_code : 0;
      this.telemetry.platformCall(what, status, (performance.now() - started) / 1000);
      throw new MattermostCallError(status, reasonOf(error));
    }
  }

  /** A post or edit that must go out: waits for a slot of the channel; a 429 pauses the bot and it goes again. */
  async send(write: PostWrite, postId?: string): Promise<Post> {
    for (let attempt = 0; ; attempt++) {
      await this.budget.take(write.channel_id);
      const answer = await this.write(write, postId);
      if (answer.post) return answer.post;
      if (answer.status !== 429 || attempt >= MATTERMOST_API_LIMITS.rateLimitRetries) throw new MattermostCallError(answer.status, answer.reason);
    }
  }

  /** An interim edit or post: only with a free slot now; null when skipped (no slot, or Mattermost answered 429). */
  async trySend(write: PostWrite, postId?: string): Promise<Post | null> {
    if (!this.budget.tryTake(write.channel_id)) return null;
    const answer = await this.write(write, postId);
    if (answer.post) return answer.post;
    if (answer.status === 429) return null;
    throw new MattermostCallError(answer.status, answer.reason);
  }

  /** Sets (or takes away) the bot's reaction `emoji` on a post; a reaction is not a message and spends no slot. */
  async react(botUserId: string, postId: string, emoji: string, on: boolean): Promise<void> {
    if (on) await this.read('reactions.add', (client) => client.addReaction(botUserId, postId, emoji));
    else await this.read('reactions.remove', (client) => client.removeReaction(botUserId, postId, emoji));
  }

  /** Rejects the writes still waiting for a slot (shutdown); a later start spends a fresh budget. */
  abandonWaiting(): void {
    this.budget.close();
    this.budget = new SendBudget(this.limits);
  }

  private async write(write: PostWrite, postId?: string): Promise<{ post: Post | null; status: number; reason: string }> {
    const url = postId ? `${this.client.getPostRoute(postId)}/patch` : this.client.getPostsRoute();
    const body = postId ? { message: write.message, props: write.props } : write;
    const method = postId ? 'posts.patch' : 'posts.create';
    const started = performance.now();
    let response: Response;
    try {
      response = await fetch(url, this.client.getOptions({ method: postId ? 'put' : 'post', body: JSON.stringify(body) }));
    } catch (error) {
      this.telemetry.platformCall(method, 0, (performance.now() - started) / 1000);
      throw new MattermostCallError(0, `Mattermost unreachable: ${reasonOf(error)}`);
    }
    this.telemetry.platformCall(method, response.status, (performance.now() - started) / 1000);
    this.honourLimits(response, method);
    const text = await response.text();
    if (response.ok) return { post: JSON.parse(text) as Post, status: response.status, reason: '' };
    return { post: null, status: response.status, reason: serverMessage(text) || `HTTP ${response.status}` };
  }

  /** `Retry-After` on a 429, or `X-Ratelimit-Remaining: 0` with `X-Ratelimit-Reset`: the bot's writes pause that long. */
  private honourLimits(response: Response, method: string): void {
    const remaining = response.headers.get('x-ratelimit-remaining');
    const waitS =
      response.status === 429
        ? Number(response.headers.get('retry-after') ?? response.headers.get('x-ratelimit-reset') ?? 1)
        : remaining === '0'
          ? Number(response.headers.get('x-ratelimit-reset') ?? 1)
          : 0;
    if (!(waitS > 0)) return;
    const ms = Math.min(waitS, MATTERMOST_API_LIMITS.maxRetryAfterS) * 1000;
    this.budget.pause(ms);
    if (response.status === 429)
      this.logger.warn({ mattermost_method: method, retry_after_s: waitS }, 'Mattermost answered 429; the bot pauses for Retry-After');
  }
}

/** Mattermost's `message` of an error body, or the text itself when short. */
function serverMessage(text: string): string {
  try {
    const parsed = JSON.parse(text) as { message?: unknown };
    return typeof parsed.message === 'string' ? parsed.message : '';
  } catch {
    return text.trim().slice(0, 200);
  }
}

function reasonOf(error: unknown): string {
  if (error instanceof Error) {
    const cause = (error as { cause?: unknown }).cause;
    const detail = cause instanceof Error && cause.message ? ` (${cause.message})` : '';
    return `${error.message || 'request failed'}${detail}`;
  }
  return String(error);
}
