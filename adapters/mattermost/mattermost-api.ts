import { Client4 } from '@mattermost/client';
import type { Channel, ChannelMembership } from '@mattermost/types/channels';
import type { Group } from '@mattermost/types/groups';
import type { Post, PostList } from '@mattermost/types/posts';
import type { Team } from '@mattermost/types/teams';
import type { UserProfile } from '@mattermost/types/users';
import type { Logger } from 'pino';
import { NO_CHANNEL_TELEMETRY, type ChannelTelemetry } from '../../src/core/telemetry';
import { SendBudget, type SendBudgetLimits } from '../shared/send-budget';
import { limitPause, serverMessage, type Exchange } from './rate-limits';

/** Named limits of the REST side (adapters/README.md: every limit a named default). */
export const MATTERMOST_API_LIMITS = {
  /** A call answered 429 goes again at most this many times (after Retry-After). */
  rateLimitRetries: 3,
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
 * The REST v4 side of the channel on the official client: `Client4` supplies the routes, the
 * headers (the bot's token) and the types, and every call goes through one exchange that reads the
 * answer's `X-Ratelimit-*` headers — `Client4`'s own calls drop them, and turn Mattermost's
 * plain-text 429 into an error without a status. Mattermost limits per user, so the bot has one
 * pause: `X-Ratelimit-Remaining: 0` holds every call until `X-Ratelimit-Reset`, a 429 until
 * `Retry-After`, and the call goes again. Posts and edits also spend the bot's send budget.
 */
export class MattermostApi {
  readonly client = new Client4();
  private budget: SendBudget;
  /** No call before this time (the bot's rate limit ran out). */
  private pausedUntil = 0;

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

  me = () => this.get<UserProfile>('users.me', this.client.getUserRoute('me'));
  myTeams = () => this.get<Team[]>('users.me.teams', `${this.client.getUserRoute('me')}/teams`);
  myChannels = (teamId: string) => this.get<Channel[]>('users.me.channels', `${this.client.getUserRoute('me')}/teams/${teamId}/channels`);
  user = (userId: string) => this.get<UserProfile>('users.get', this.client.getUserRoute(userId));
  channel = (channelId: string) => this.get<Channel>('channels.get', this.client.getChannelRoute(channelId));
  thread = (rootId: string) => this.get<PostList>('posts.thread', `${this.client.getPostRoute(rootId)}/thread`);
  channelMember = (channelId: string, userId: string) =>
    this.get<ChannelMembership>('channels.members.get', this.client.getChannelMemberRoute(channelId, userId));
  groupsNamed = (name: string) => this.get<Group[]>('groups.list', `${this.client.getGroupsRoute()}?q=${encodeURIComponent(name)}&per_page=60`);
  groupMembers = (groupId: string, page: number, perPage: number) =>
    this.get<{ members: UserProfile[]; total_member_count: number }>(
      'groups.members',
      `${this.client.getGroupRoute(groupId)}/members?page=${page}&per_page=${perPage}`,
    );
  postsSince = (channelId: string, since: number) => this.get<PostList>('channels.posts', `${this.client.getChannelRoute(channelId)}/posts?since=${since}`);

  /** Sets (or takes away) the bot's reaction `emoji` on a post; a reaction is not a message and spends no slot. */
  async react(botUserId: string, postId: string, emoji: string, on: boolean): Promise<void> {
    if (on) await this.call('reactions.add', 'post', this.client.getReactionsRoute(), { user_id: botUserId, post_id: postId, emoji_name: emoji });
    else await this.call('reactions.remove', 'delete', `${this.client.getUserRoute(botUserId)}/posts/${postId}/reactions/${emoji}`);
  }

  /** A post or edit that must go out: waits for a slot of the channel; a 429 pauses the bot and it goes again. */
  async send(write: PostWrite, postId?: string): Promise<Post> {
    for (let attempt = 0; ; attempt++) {
      await this.budget.take(write.channel_id);
      const answer = await this.write(write, postId);
      if (answer.status < 300) return answer.data as Post;
      if (answer.status !== 429 || attempt >= MATTERMOST_API_LIMITS.rateLimitRetries) throw new MattermostCallError(answer.status, answer.reason);
    }
  }

  /** An interim edit or post: only with a free slot now and the bot not paused; null when skipped (or answered 429). */
  async trySend(write: PostWrite, postId?: string): Promise<Post | null> {
    if (this.pausedUntil > Date.now() || !this.budget.tryTake(write.channel_id)) return null;
    const answer = await this.write(write, postId);
    if (answer.status < 300) return answer.data as Post;
    if (answer.status === 429) return null;
    throw new MattermostCallError(answer.status, answer.reason);
  }

  /** Rejects the writes still waiting for a slot (shutdown); a later start spends a fresh budget. */
  abandonWaiting(): void {
    this.budget.close();
    this.budget = new SendBudget(this.limits);
  }

  private write(write: PostWrite, postId?: string): Promise<Exchange> {
    return postId
      ? this.exchange('posts.patch', 'put', `${this.client.getPostRoute(postId)}/patch`, { message: write.message, props: write.props })
      : this.exchange('posts.create', 'post', this.client.getPostsRoute(), write);
  }

  private get<T>(what: string, url: string): Promise<T> {
    return this.call(what, 'get', url) as Promise<T>;
  }

  /** A call that is not a post: after a 429 it waits for Retry-After and goes again (at most `rateLimitRetries` times). */
  private async call(what: string, method: string, url: string, body?: unknown): Promise<unknown> {
    for (let attempt = 0; ; attempt++) {
      const answer = await this.exchange(what, method, url, body);
      if (answer.status < 300) return answer.data;
      if (answer.status !== 429 || attempt >= MATTERMOST_API_LIMITS.rateLimitRetries) throw new MattermostCallError(answer.status, answer.reason);
    }
  }

  /** One request: waits out the bot's pause, then reads the status, the body and the rate-limit headers. */
  private async exchange(what: string, method: string, url: string, body?: unknown): Promise<Exchange> {
    const wait = this.pausedUntil - Date.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    const started = performance.now();
    let response: Response;
    try {
      response = await fetch(url, this.client.getOptions({ method, ...(body === undefined ? {} : { body: JSON.stringify(body) }) }));
    } catch (error) {
      this.telemetry.platformCall(what, 0, (performance.now() - started) / 1000);
      const cause = (error as { cause?: { message?: string } }).cause?.message;
      throw new MattermostCallError(0, `Mattermost unreachable: ${(error as Error).message}${cause ? ` (${cause})` : ''}`);
    }
    this.telemetry.platformCall(what, response.status, (performance.now() - started) / 1000);
    const pauseMs = limitPause(response);
    if (pauseMs > 0) this.pause(pauseMs, what, response.status);
    const text = await response.text();
    if (response.ok) return { status: response.status, data: text ? (JSON.parse(text) as unknown) : null, reason: '' };
    return { status: response.status, data: null, reason: serverMessage(text) || `HTTP ${response.status}` };
  }

  private pause(ms: number, what: string, status: number): void {
    this.pausedUntil = Math.max(this.pausedUntil, Date.now() + ms);
    this.budget.pause(ms);
    if (status === 429) this.logger.warn({ mattermost_method: what, retry_after_ms: ms }, 'Mattermost answered 429; the bot pauses for Retry-After');
  }
}
