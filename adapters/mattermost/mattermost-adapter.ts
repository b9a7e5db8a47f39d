import type { Post } from '@mattermost/types/posts';
import type { Logger } from 'pino';
import type { ChannelAdapter, ChannelReporter } from '../../src/core/channel';
import type { ChannelCursors } from '../../src/core/channel-cursors';
import type { Hub } from '../../src/core/hub';
import type { RenderLeases } from '../../src/core/render-lease';
import type { ChannelTelemetry } from '../../src/core/telemetry';
import { ChatFollower } from '../shared/chat-follower';
import type { SendBudgetLimits } from '../shared/send-budget';
import { actionsHandler } from './actions-route';
import { MattermostApproverGroups } from './approver-groups';
import { actionKey, MATTERMOST_ACTIONS_PATH } from './confirm-buttons';
import { EventSocket, type MattermostEvent } from './event-socket';
import { MattermostApi } from './mattermost-api';
import { Directory } from './directory';
import { eventMentions, eventPost, isPersonPost, MATTERMOST_CHANNEL, mentionsBot, normalizePost, stripMention, type ChannelType } from './normalize';
import { postSurface } from './post-surface';
import { catchUp } from './catch-up';
import { PostCursors } from './post-cursors';

/** Named limits of the adapter (adapters/README.md: every limit a named default). */
export const MATTERMOST_DEFAULTS = {
  /** At shutdown, answers still being sent get this long. */
  stopGraceMs: 5000,
  /** After this many failed reconnects in a row the channel reports itself failed (the hub restarts it with its backoff). */
  failAfterReconnects: 3,
  /** A post whose ingest failed (the hub's store or queue down) is tried again this soon, doubled per failure… */
  ingestRetryMinMs: 500,
  /** …up to this long between tries… */
  ingestRetryMaxMs: 30_000,
  /** …this many times; after that the next catch-up (a reconnect, a restart) finds it. */
  ingestRetries: 8,
} as const;

/** How a post was heard: over the socket (with the event's facts) or by a catch-up. */
interface Heard {
  channelType?: ChannelType;
  mentions?: string[];
}

export interface MattermostAdapterConfig {
  url: string;
  botToken: string;
  /** Team names or ids whose channels are answered; empty: every team. */
  teams: readonly string[];
  actionsUrl: string | null;
  editIntervalMs: number;
  typingIntervalMs: number;
  reconnectMinMs: number;
  reconnectMaxMs: number;
  sendBudget: SendBudgetLimits;
  logger: Logger;
  telemetry?: ChannelTelemetry;
  renderLeases?: RenderLeases;
  /** Where the channel got to, kept across restarts of the hub (ChannelContext.cursors); absent: in memory only. */
  cursors?: ChannelCursors;
}

/**
 * The Mattermost channel: the event socket's `posted` events (DMs, mentions of the bot, replies in
 * its threads) → `Hub.ingest`; each turn shown as one post edited as it grows (adapters/shared
 * presents it on `postSurface`). After the socket dropped it reconnects with backoff and catches up
 * over REST on the posts it missed; a post is taken in once whichever way it came (its id is the
 * externalId). Edits and deletions of a post still waiting for its turn change or drop that turn.
 */
export class MattermostAdapter implements ChannelAdapter {
  readonly name = MATTERMOST_CHANNEL;
  readonly routes: ChannelAdapter['routes'];
  private readonly api: MattermostApi;
  private readonly follower: ChatFollower;
  private readonly key: Buffer;
  private socket: EventSocket | null = null;
  private directory: Directory | null = null;
  private hub: Hub | null = null;
  /** Where the channel got to in each Mattermost channel: every start catches up from there. */
  private readonly cursors: PostCursors;
  /** Retries of posts whose ingest failed, waiting for their time. */
  private readonly retries = new Set<NodeJS.Timeout>();
  /** Posts are taken in one after the other, in the order they arrived (socket and catch-up alike). */
  private chain: Promise<void> = Promise.resolve();

  constructor(private readonly config: MattermostAdapterConfig) {
    this.api = new MattermostApi(config.url, config.botToken, config.sendBudget, config.logger, config.telemetry);
    this.key = actionKey(config.botToken);
    this.cursors = new PostCursors(config.cursors, config.logger);
    this.follower = new ChatFollower({
      channel: MATTERMOST_CHANNEL,
      logger: config.logger,
      telemetry: config.telemetry,
      leases: config.renderLeases,
      shutdownGraceMs: MATTERMOST_DEFAULTS.stopGraceMs,
    });
    const approvers = new MattermostApproverGroups(this.api);
    const groups = (channelId: string, userId: string) => approvers.forClicker(channelId, userId);
    this.routes = [{ path: MATTERMOST_ACTIONS_PATH, handler: actionsHandler({ key: this.key, hub: () => this.hub, groups }) }];
  }

  /** Checks the token (`GET /users/me`), learns the teams, opens the event socket; throws with Mattermost's reason. */
  async start(hub: Hub, reporter: ChannelReporter): Promise<void> {
    const me = await this.api.me().catch((error: unknown) => {
      throw new Error(`GET /api/v4/users/me failed: ${(error as Error).message}`);
    });
    const known = await this.cursors.load().catch((error: unknown) => {
      throw new Error(`could not read where the channel got to: ${(error as Error).message}`);
    });
    const directory = await Directory.load(this.api, { id: me.id, username: me.username }, this.config.teams);
    this.directory = directory;
    const socket = new EventSocket({
      url: this.config.url,
      token: this.config.botToken,
      logger: this.config.logger,
      reconnectMinMs: this.config.reconnectMinMs,
      reconnectMaxMs: this.config.reconnectMaxMs,
      onEvent: (event) => this.enqueue(() => this.onEvent(event)),
      onReconnected: () => this.enqueue(() => this.catchUp()),
      onReconnectFailed: (reason, attempts) => {
        this.config.logger.warn({ attempts, reason }, 'mattermost: reconnecting the event socket failed');
        if (attempts >= MATTERMOST_DEFAULTS.failAfterReconnects && this.hub) reporter.failed(`event socket: ${reason}`);
      },
    });
    await socket.open();
    this.socket = socket;
    this.hub = hub;
    // The posts made while it did not listen (the hub was down, or this channel failed) come from the catch-up.
    if (known) this.enqueue(() => this.catchUp());
    if (!this.config.actionsUrl) this.config.logger.warn('mattermost: channels.mattermost.actions_url is not set; confirmations are asked as text');
  }

  async stop(): Promise<void> {
    this.hub = null;
    for (const timer of this.retries) clearTimeout(timer);
    this.retries.clear();
    this.socket?.close();
    this.socket = null;
    await this.chain;
    await this.cursors.flush();
    await this.follower.stop(() => this.api.abandonWaiting());
  }

  private enqueue(work: () => Promise<void>): void {
    this.chain = this.chain.then(work).catch((error: unknown) => this.config.logger.error({ err: error }, 'mattermost: an event could not be taken in'));
  }

  private async onEvent(event: MattermostEvent): Promise<void> {
    const hub = this.hub;
    const post = eventPost(event.data);
    if (!hub || !post || !this.directory) return;
    if (event.event === 'posted') {
      const channelType = typeof event.data.channel_type === 'string' ? (event.data.channel_type as ChannelType) : undefined;
      return this.takeTracked(post, { channelType, mentions: eventMentions(event.data) });
    }
    if (post.user_id === this.directory.bot.id) return;
    if (event.event === 'post_deleted') await hub.amendWaiting(MATTERMOST_CHANNEL, post.id, null);
    if (event.event === 'post_edited') await hub.amendWaiting(MATTERMOST_CHANNEL, post.id, stripMention(post.message, this.directory.bot.username));
  }

  /** A post: taken in when it is a DM, mentions the bot, or replies in a thread of the bot's (and its team is served). */
  private async take(hub: Hub, post: Post, seen: Heard): Promise<void> {
    const directory = this.directory!;
    if (!isPersonPost(post, directory.bot.id)) return;
    const channel = await directory.channel(post.channel_id);
    if (!channel || !directory.serves(channel)) return;
    const context = {
      botUserId: directory.bot.id,
      botUsername: directory.bot.username,
      channelType: seen.channelType ?? channel.type,
      mentions: seen.mentions,
    };
    const wanted = context.channelType === 'D' || mentionsBot(post, context) || (post.root_id !== '' && (await directory.isBotThread(post.root_id)));
    if (!wanted) return;
    const inbound = normalizePost(post, context, await directory.sender(post.user_id, channel));
    if (!inbound) return;
    if (inbound.rootId) directory.noteBotThread(inbound.rootId);
    const socket = this.socket;
    const surface = postSurface({
      api: this.api,
      typing: (channelId, parentId) => socket?.typing(channelId, parentId),
      botUserId: directory.bot.id,
      channelId: inbound.channelId,
      rootId: inbound.rootId,
      postId: inbound.postId,
      editIntervalMs: this.config.editIntervalMs,
      typingIntervalMs: this.config.typingIntervalMs,
      buttons: this.config.actionsUrl ? { key: this.key, actionsUrl: this.config.actionsUrl } : null,
    });
    await this.follower.take(hub, inbound.message, surface);
  }

  /**
   * A post, taken in and its position kept. When taking it in fails (the hub's store or queue down:
   * Mattermost never sends the event again) it is tried again with backoff; until it is in, the
   * channel's kept position stays before it, so a catch-up after a reconnect or restart finds it too.
   */
  private async takeTracked(post: Post, seen: Heard, attempt = 0): Promise<void> {
    const hub = this.hub;
    if (!hub) return;
    try {
      await this.take(hub, post, seen);
      this.cursors.done(post);
    } catch (error) {
      this.cursors.failed(post);
      const { ingestRetries, ingestRetryMinMs, ingestRetryMaxMs } = MATTERMOST_DEFAULTS;
      if (attempt >= ingestRetries) {
        this.config.logger.error({ err: error, post_id: post.id }, 'mattermost: a post could not be taken in; the next catch-up tries again');
        return;
      }
      const wait = Math.min(ingestRetryMinMs * 2 ** attempt, ingestRetryMaxMs);
      this.config.logger.warn({ err: error, post_id: post.id, retry_in_ms: wait }, 'mattermost: a post could not be taken in; trying again');
      const timer = setTimeout(() => {
        this.retries.delete(timer);
        this.enqueue(() => this.takeTracked(post, seen, attempt + 1));
      }, wait);
      timer.unref();
      this.retries.add(timer);
    }
  }

  /** The posts of the bot's channels since shortly before each one's kept position, oldest first. */
  private async catchUp(): Promise<void> {
    if (!this.hub || !this.directory) return;
    const since = (channelId: string) => this.cursors.since(channelId);
    const posts = await catchUp(this.api, this.directory, since, this.config.logger, this.cursors.listeningSince);
    for (const post of posts) await this.takeTracked(post, {});
  }
}
