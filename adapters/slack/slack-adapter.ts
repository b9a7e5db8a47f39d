import { App, SocketModeReceiver, type AllMiddlewareArgs, type BlockAction, type ButtonAction, type SlackActionMiddlewareArgs, type webApi } from '@slack/bolt';
type WebClient = webApi.WebClient;
import type { Logger } from 'pino';
import type { ChannelAdapter, ConnectionCheck } from '../../src/core/channel';
import { checkSlackConnection } from './connection-check';
import { AppError } from '../../src/core/errors';
import type { Hub } from '../../src/core/hub';
import { boltLogger } from './bolt-logger';
import { IngestFailure, notRunning, slackEventsReceiver } from './events-receiver';
import { platformReason } from './platform-reason';
import { answeredBlocks, CONFIRM_ACTION_PREFIX, decodeChoice } from './confirm-buttons';
import { SlackApproverGroups } from './approver-groups';
import { clickNote, confirmClick, STALE_TEXT } from '../shared/confirm-click';
import {
  conversationOf,
  isConversationalEvent,
  messageEventIssues,
  normalizeChange,
  normalizeMessage,
  SLACK_CHANNEL,
  type SlackChangeEvent,
  type SlackMessageEvent,
} from './normalize';
import type { SendBudgetLimits } from '../shared/send-budget';
import { offerPrompts, type AssistantThreadStartedEvent, type SuggestedPrompts } from './assistant-thread';
import { slackSurface, type ReplyTarget } from './render';
import { SlackOutbox, webClientOptions } from './slack-outbox';
import { UserNames } from './user-names';
import type { ChannelTelemetry } from '../../src/core/telemetry';
import type { RenderLeases } from '../../src/core/render-lease';
import { ChatFollower } from '../shared/chat-follower';
import { slackDelivery } from './delivery';

export interface SlackAdapterConfig {
  logger: Logger;
  /** Events API over HTTP (our express app) or Socket Mode (an outbound WebSocket, no public URL). */
  mode: 'events' | 'socket';
  botToken: string;
  /** Required in events mode: bolt verifies every request's signature and 5-minute timestamp with it. */
  signingSecret: string | null;
  /** Required in socket mode (`xapp-…`, connections:write). */
  appToken: string | null;
  /** The Web API base (a sovereign deployment, or a fake in tests); ends with `/`. */
  apiUrl: string;
  editIntervalMs: number;
  /** One budget for every message the channel sends (per Slack channel and overall), shared by all turns. */
  sendBudget: SendBudgetLimits;
  /** Stream replies in threads with chat.startStream/appendStream/stopStream (edits where Slack refuses). */
  nativeStreaming: boolean;
  /** Show the assistant thread status ("is thinking…") while a turn runs. */
  threadStatus: boolean;
  suggestedPrompts: SuggestedPrompts;
  /** Web API calls and first answers, for the hub's metrics. */
  telemetry?: ChannelTelemetry;
  /** Chats' rendering leases (ChannelContext.renderLeases): a thread's answers in order across processes. */
  renderLeases?: RenderLeases;
}

/** Seconds Slack is asked to wait before delivering again while the channel is not running. */

/**
 * The Slack channel on bolt: messages become `Hub.ingest` calls, acknowledged only once stored and
 * queued (`processBeforeResponse`), and the session's events are rendered back in the thread.
 */
export class SlackAdapter implements ChannelAdapter {
  readonly name = 'slack' as const;
  readonly routes?: ChannelAdapter['routes'];
  /** Posts webhook and schedule answers into Slack channels (issue 29). */
  readonly delivery: ChannelAdapter['delivery'];
  private readonly app: App;
  private readonly users: UserNames;
  private readonly groups: SlackApproverGroups;
  /** Takes messages in and shows their turns (adapters/shared): this channel supplies the reply surface. */
  private follower: ChatFollower | null = null;
  private readonly renders = new Set<Promise<void>>();
  private hub: Hub | null = null;
  private outbox: SlackOutbox | null = null;
  private socketStarted = false;

  constructor(private readonly config: SlackAdapterConfig) {
    const logger = boltLogger(config.logger);
    const clientOptions = webClientOptions(config.apiUrl);
    // `deferInitialization`: bolt would otherwise call auth.test in its constructor and leave the
    // rejection of a wrong token or an unreachable API unhandled, which ends the process.
    // `start()` runs it instead (`app.init()`), where a failure is caught and retried.
    const deferInitialization = true;
    if (config.mode === 'socket') {
      // Our own receiver so that apps.connections.open goes to `apiUrl` too (bolt's default one ignores it).
      const receiver = new SocketModeReceiver({ appToken: config.appToken ?? '', logger, installerOptions: { clientOptions } });
      this.app = new App({ token: config.botToken, receiver, socketMode: true, logger, clientOptions, deferInitialization });
    } else {
      const events = slackEventsReceiver(config, () => this.hub !== null);
      this.app = new App({ token: config.botToken, receiver: events.receiver, logger, clientOptions, deferInitialization });
      this.routes = [events.route];
    }
    this.users = new UserNames(config.logger);
    this.groups = new SlackApproverGroups();
    this.delivery = slackDelivery(
      () => this.app.client,
      () => this.requireOutbox(),
      {
        editIntervalMs: config.editIntervalMs,
        threadStatus: config.threadStatus,
        logger: config.logger,
        approverNames: (text) => this.groups.named(this.app.client, text),
      },
    );
    this.app.event('message', async ({ event, body, context, client }) => this.onMessage(event as unknown as SlackMessageEvent, body, context, client));
    this.app.event('app_mention', async ({ event, body, context, client }) => this.onMessage(event as unknown as SlackMessageEvent, body, context, client));
    this.app.event('assistant_thread_started', async ({ event, body, context, client }) =>
      this.onAssistantThread(event as unknown as AssistantThreadStartedEvent, body, context, client),
    );
    this.app.action({ action_id: new RegExp(`^${CONFIRM_ACTION_PREFIX}`) }, async (args) =>
      this.onButton(args as SlackActionMiddlewareArgs<BlockAction<ButtonAction>> & AllMiddlewareArgs),
    );
  }

  /** auth.test with the bot token, for the admin's "test connection"; never throws. */
  checkConnection(): Promise<ConnectionCheck> {
    return checkSlackConnection(this.app.client);
  }

  /** Verifies the bot token (auth.test), then connects in socket mode; throws with Slack's reason. */
  async start(hub: Hub): Promise<void> {
    try {
      await this.app.init();
    } catch (error) {
      throw new Error(`auth.test failed: ${platformReason(error)}`);
    }
    if (this.config.mode === 'socket') {
      this.socketStarted = true;
      try {
        await this.app.start();
      } catch (error) {
        throw new Error(`apps.connections.open failed: ${platformReason(error)}`);
      }
    }
    this.outbox = new SlackOutbox(this.config.sendBudget, this.config.logger, this.config.telemetry);
    // Sends still waiting for a slot at shutdown are given up at once (no grace), as the outbox closes.
    this.follower = new ChatFollower({
      channel: 'slack',
      logger: this.config.logger,
      telemetry: this.config.telemetry,
      leases: this.config.renderLeases,
      shutdownGraceMs: 0,
    });
    this.hub = hub;
  }

  async stop(): Promise<void> {
    this.hub = null;
    const outbox = this.outbox;
    this.outbox = null;
    await this.follower?.stop(() => outbox?.close()); // sends still waiting for a slot are given up
    this.follower = null;
    await Promise.allSettled([...this.renders]);
    if (this.socketStarted) {
      this.socketStarted = false;
      await this.app.stop();
    }
  }

  private async onMessage(
    event: SlackMessageEvent,
    body: { event_id?: string; team_id?: string },
    context: { botUserId?: string; teamId?: string },
    client: WebClient,
  ): Promise<void> {
    const hub = this.requireHub();
    const issues = messageEventIssues(event);
    if (issues) throw AppError.validation(issues, 'The body is not a Slack message event.');
    if (event.subtype === 'message_changed' || event.subtype === 'message_deleted') {
      // An edit or deletion before the message's turn started changes what is answered.
      const change = normalizeChange(event as unknown as SlackChangeEvent, context.botUserId);
      if (change) await hub.amendWaiting(SLACK_CHANNEL, change.externalId, change.text);
      return;
    }
    if (!isConversationalEvent(event, context.botUserId)) return;
    const teamId = context.teamId ?? body.team_id ?? 'T0';
    const displayName = await this.users.lookup(client, event.user!);
    const message = normalizeMessage({ event, teamId, botUserId: context.botUserId, displayName });
    if (!message) return;
    const conversation = conversationOf(event, teamId);
    const target: ReplyTarget = {
      channel: conversation.channel,
      threadTs: conversation.threadTs,
      recipient: { userId: event.user!, teamId: conversation.team },
    };
    const calls = this.requireOutbox().calls(client, teamId);
    const { editIntervalMs, nativeStreaming, threadStatus, logger } = this.config;
    const approverNames = (text: string) => this.groups.named(client, text);
    const surface = slackSurface(
      calls,
      target,
      { editIntervalMs, nativeStreaming, threadStatus, logger, approverNames },
      { channel: event.channel, ts: event.ts },
    );
    // Stopped meanwhile: thrown, so Slack delivers the event again (a 500).
    if (!this.follower) throw new Error('the Slack channel is not started');
    try {
      await this.follower.take(hub, message, surface);
    } catch (error) {
      // Not stored (queue or database down): a 503 makes Slack deliver again, and the hub freed the event id.
      throw error instanceof AppError ? error : new IngestFailure('the hub could not take the message in', { cause: error });
    }
  }

  /** Someone opened the bot's assistant thread: offer the suggested prompts. */
  private async onAssistantThread(
    event: AssistantThreadStartedEvent,
    body: { team_id?: string },
    context: { teamId?: string },
    client: WebClient,
  ): Promise<void> {
    this.requireHub();
    const teamId = context.teamId ?? body.team_id ?? 'T0';
    this.track(offerPrompts(this.requireOutbox().calls(client, teamId), event, this.config.suggestedPrompts).then(() => undefined));
  }

  private async onButton({ ack, action, body, client }: SlackActionMiddlewareArgs<BlockAction<ButtonAction>> & AllMiddlewareArgs): Promise<void> {
    const hub = this.requireHub();
    const choice = decodeChoice(action.value);
    if (!choice) return ack();
    // Who pressed the button (the audit trail names the Slack user), and the groups they are in, asked now.
    const actor = { kind: 'contact' as const, channel: SLACK_CHANNEL, id: body.user.id, name: body.user.name ?? null };
    const click = await confirmClick(() =>
      hub.confirmTool(choice.sessionId, choice.confirmationId, choice.action, actor, this.groups.forClicker(client, body.user.id)),
    );
    if (click.kind === 'failed') this.config.logger.error({ err: click.error, session_id: choice.sessionId }, 'a Slack confirmation failed');
    await ack();
    const channel = body.channel?.id;
    const ts = body.message?.ts;
    if (!channel || !ts) return;
    // Refused, or counted toward a quorum: only the clicker is told; the question and its buttons stay.
    const note = clickNote(click);
    if (note !== null) {
      const threadTs = (body.message as { thread_ts?: string } | undefined)?.thread_ts;
      const ephemeral = { channel, user: body.user.id, text: note, ...(threadTs ? { thread_ts: threadTs } : {}) };
      this.track(client.apiCall('chat.postEphemeral', ephemeral).then(() => undefined));
      return;
    }
    const text = click.kind === 'answered' ? `${choice.tool}: ${click.action ?? choice.action}` : STALE_TEXT;
    const blocks =
      click.kind === 'answered'
        ? answeredBlocks(choice.tool, click.action ?? choice.action, body.user.id)
        : [{ type: 'section', text: { type: 'mrkdwn', text } }];
    // After the ack (Slack's 3-second deadline is about the ack, not this edit).
    const calls = this.requireOutbox().calls(client, body.team?.id ?? 'T0');
    this.track(calls.send('chat.update', { channel, ts, text, blocks }).then(() => undefined));
  }

  private track(call: Promise<void>): void {
    const tracked = call.catch((error: unknown) => this.config.logger.error({ err: error }, 'a Slack call failed'));
    this.renders.add(tracked);
    void tracked.finally(() => this.renders.delete(tracked));
  }

  private requireOutbox(): SlackOutbox {
    if (!this.outbox) throw new Error('the Slack channel is not started');
    return this.outbox;
  }

  private requireHub(): Hub {
    // Slack delivers again after a 503, so an event arriving while not started is not lost.
    if (!this.hub) throw notRunning();
    return this.hub;
  }
}
