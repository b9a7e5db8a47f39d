import type { Post } from '@mattermost/types/posts';
import type { Logger } from 'pino';
import type { ChannelAdapter, ChannelReporter } from '../../src/core/channel';
import type { Hub } from '../../src/core/hub';
import type { RenderLeases } from '../../src/core/render-lease';
import type { ChannelTelemetry } from '../../src/core/telemetry';
import { ChatFollower } from '../shared/chat-follower';
import type { SendBudgetLimits } from '../shared/send-budget';
import { actionsHandler } from './actions-route';
import { actionKey, MATTERMOST_ACTIONS_PATH } from './confirm-buttons';
import { EventSocket, type MattermostEvent } from './event-socket';
import { MattermostApi } from './mattermost-api';
import { Directory } from './directory';
import { eventMentions, eventPost, isPersonPost, MATTERMOST_CHANNEL, mentionsBot, normalizePost, stripMention, type ChannelType } from './normalize';
import { postSurface } from './post-surface';
import { catchUp } from './catch-up';

/** Named limits of the adapter (adapters/README.md: every limit a named default). */
export const MATTERMOST_DEFAULTS = {
  /** At shutdown, answers still being sent get this long. */
  stopGraceMs: 5000,
  /** After this many failed reconnects in a row the channel reports itself failed (the hub restarts it with its backoff). */
  failAfterReconnects: 3,
  /** The catch-up after a reconnect asks for posts from this long before the last event heard (duplicates are recognised). */
  catchUpMarginMs: 5000,
} as const;

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
  /** When the previous run's socket last heard an event: a restarted channel catches up from there. */
  private heardUntil = 0;
  /** Posts are taken in one after the other, in the order they arrived (socket and catch-up alike). */
  private chain: Promise<void> = Promise.resolve();

  constructor(private readonly config: MattermostAdapterConfig) {
    this.api = new MattermostApi(config.url, config.botToken, config.sendBudget, config.logger, config.telemetry);
    this.key = actionKey(config.botToken);
    this.follower = new ChatFollower({
      channel: MATTERMOST_CHANNEL,
      logger: config.logger,
      telemetry: config.telemetry,
      leases: config.renderLeases,
      shutdownGraceMs: MATTERMOST_DEFAULTS.stopGraceMs,
    });
    this.routes = [{ path: MATTERMOST_ACTIONS_PATH, handler: actionsHandler({ key: this.key, hub: () => this.hub }) }];
  }

  /** Checks the token (`GET /users/me`), learns the teams, opens the event socket; throws with Mattermost's reason. */
  async start(hub: Hub, reporter: ChannelReporter): Promise<void> {
    const me = await this.api.me().catch((error: unknown) => {
      throw new Error(`GET /api/v4/users/me failed: ${(error as Error).message}`);
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
      onReconnected: (since) => this.enqueue(() => this.catchUp(since)),
      onReconnectFailed: (reason, attempts) => {
        this.config.logger.warn({ attempts, reason }, 'mattermost: reconnecting the event socket failed');
        if (attempts >= MATTERMOST_DEFAULTS.failAfterReconnects && this.hub) reporter.failed(`event socket: ${reason}`);
      },
    });
    await socket.open();
    this.socket = socket;
    this.hub = hub;
    // Started again after a failure: the posts made while it was down come from the catch-up.
    if (this.heardUntil > 0) this.enqueue(() => this.catchUp(this.heardUntil));
    if (!this.config.actionsUrl) this.config.logger.warn('mattermost: channels.mattermost.actions_url is not set; confirmations are asked as text');
  }

  async stop(): Promise<void> {
    this.hub = null;
    this.heardUntil = Math.max(this.heardUntil, this.socket?.lastHeard ?? 0);
    this.socket?.close();
    this.socket = null;
    await this.chain;
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
      return this.take(hub, post, { channelType, mentions: eventMentions(event.data) });
    }
    if (post.user_id === this.directory.bot.id) return;
    if (event.event === 'post_deleted') await hub.amendWaiting(MATTERMOST_CHANNEL, post.id, null);
    if (event.event === 'post_edited') await hub.amendWaiting(MATTERMOST_CHANNEL, post.id, stripMention(post.message, this.directory.bot.username));
  }

  /** A post: taken in when it is a DM, mentions the bot, or replies in a thread of the bot's (and its team is served). */
  private async take(hub: Hub, post: Post, seen: { channelType?: ChannelType; mentions?: string[] }): Promise<void> {
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

  /** After a reconnect: the posts of the bot's channels since shortly before the last event heard, oldest first. */
  private async catchUp(since: number): Promise<void> {
    const hub = this.hub;
    if (!hub || !this.directory) return;
    const posts = await catchUp(this.api, this.directory, since - MATTERMOST_DEFAULTS.catchUpMarginMs, this.config.logger);
    for (const post of posts) await this.take(hub, post, {});
  }
}
