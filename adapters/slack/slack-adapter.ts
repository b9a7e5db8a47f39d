import {
  App,
  ExpressReceiver,
  SocketModeReceiver,
  type AllMiddlewareArgs,
  type BlockAction,
  type ButtonAction,
  type SlackActionMiddlewareArgs,
  type webApi,
} from '@slack/bolt';
type WebClient = webApi.WebClient;
import type { Logger } from 'pino';
import type { RequestHandler } from 'express';
import type { ChannelAdapter } from '../../src/core/channel';
import { AppError } from '../../src/core/errors';
import type { Hub } from '../../src/core/hub';
import { boltLogger } from './bolt-logger';
import { platformReason } from './platform-reason';
import { answeredBlocks, CONFIRM_ACTION_PREFIX, decodeChoice } from './confirm-buttons';
import { SLACK_LIMITS } from './limits';
import { slackSignatureCheck } from './signature';
import { unhandledPayload } from './unhandled';
import {
  conversationOf,
  isConversationalEvent,
  messageEventIssues,
  payloadIssues,
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
const NOT_RUNNING_RETRY_AFTER_S = 30;

/** Paths under /api/v1/channels/slack (decisions.md §7). */
export const SLACK_PATHS = { base: '/channels/slack', events: '/events', interactions: '/interactions' } as const;

/**
 * The Slack channel on bolt: messages become `Hub.ingest` calls, acknowledged only once stored and
 * queued (`processBeforeResponse`), and the session's events are rendered back in the thread.
 */
export class SlackAdapter implements ChannelAdapter {
  readonly name = 'slack' as const;
  readonly routes?: ChannelAdapter['routes'];
  private readonly app: App;
  private readonly users: UserNames;
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
      const receiver = new ExpressReceiver({
        signingSecret: config.signingSecret ?? '',
        endpoints: { events: SLACK_PATHS.events, interactions: SLACK_PATHS.interactions },
        // Answer Slack only after the listener stored and queued the message (and 503 if it could not, so Slack retries).
        processBeforeResponse: true,
        logger,
        // Runs once the signature is verified and the body parsed, before bolt reads it: a body that
        // is no Slack payload is refused (422) here, rather than left unanswered (bolt: 404 after 3 s)
        // or failing inside bolt (500). Thrown, it reaches the app's error handler.
        customPropertiesExtractor: (request) => {
          const issues = payloadIssues(request.body);
          if (issues) throw AppError.validation(issues, 'The body is not a Slack event or interaction.');
          return {};
        },
        // A listener's failure goes to the app's error handler: the documented envelope.
        processEventErrorHandler: async ({ error, request }) => {
          const refusal = listenerRefusal(error);
          if (refusal.code === 'VALIDATION_ERROR' && !(error instanceof AppError))
            config.logger.warn({ err: error }, 'slack: a signed payload could not be read (refused with 422)');
          nextOf.get(request)?.(refusal);
          return false;
        },
      });
      this.app = new App({ token: config.botToken, receiver, logger, clientOptions, deferInitialization });
      const router = receiver.router as unknown as RequestHandler;
      const signed = slackSignatureCheck(config.signingSecret ?? '', SLACK_LIMITS.maxRequestBytes);
      const nextOf = new WeakMap<object, (error: AppError) => void>();
      // Until the token is verified (or while the channel is failed) Slack is told to deliver again later.
      this.routes = [
        {
          path: SLACK_PATHS.base,
          handler: (req, res, next) => {
            if (!this.hub) return next(notRunning());
            nextOf.set(req, next);
            // The signature is checked first (401 in the envelope). bolt's own refusals of what is left
            // (an unparseable body) come as an empty 400: answered in the envelope too, through the
            // app's error handler.
            const send = res.send.bind(res);
            res.send = ((body?: unknown) => {
              res.send = send;
              if (res.statusCode >= 400 && (body === undefined || body === '')) {
                next(receiverRefusal(res.statusCode));
                return res;
              }
              return send(body);
            }) as typeof res.send;
            return signed(req, res, (error?: unknown) => {
              if (error) return next(error);
              const unhandled = unhandledPayload((req as typeof req & { rawBody: Buffer }).rawBody, req.get('content-type'));
              if (unhandled === null) return router(req, res, next);
              this.config.logger.info({ payload: unhandled }, 'slack: a payload this channel does not handle was acknowledged and dropped');
              res.status(200).send('');
            });
          },
        },
      ];
    }
    this.users = new UserNames(config.logger);
    this.app.event('message', async ({ event, body, context, client }) => this.onMessage(event as unknown as SlackMessageEvent, body, context, client));
    this.app.event('app_mention', async ({ event, body, context, client }) => this.onMessage(event as unknown as SlackMessageEvent, body, context, client));
    this.app.event('assistant_thread_started', async ({ event, body, context, client }) =>
      this.onAssistantThread(event as unknown as AssistantThreadStartedEvent, body, context, client),
    );
    this.app.action({ action_id: new RegExp(`^${CONFIRM_ACTION_PREFIX}`) }, async (args) =>
      this.onButton(args as SlackActionMiddlewareArgs<BlockAction<ButtonAction>> & AllMiddlewareArgs),
    );
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
    const surface = slackSurface(calls, target, { editIntervalMs, nativeStreaming, threadStatus, logger }, { channel: event.channel, ts: event.ts });
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
    let text: string;
    try {
      // Who pressed the button: the audit trail names the Slack user.
      await hub.confirmTool(choice.sessionId, choice.confirmationId, choice.action, {
        kind: 'contact',
        channel: SLACK_CHANNEL,
        id: body.user.id,
        name: body.user.name ?? null,
      });
      text = `${choice.tool}: ${choice.action}`;
    } catch (error) {
      if (!(error instanceof AppError) || error.status >= 500)
        this.config.logger.error({ err: error, session_id: choice.sessionId }, 'a Slack confirmation failed');
      text = 'This confirmation is no longer pending.';
    }
    await ack();
    const channel = body.channel?.id;
    const ts = body.message?.ts;
    if (!channel || !ts) return;
    const blocks =
      text === 'This confirmation is no longer pending.'
        ? [{ type: 'section', text: { type: 'mrkdwn', text } }]
        : answeredBlocks(choice.tool, choice.action, body.user.id);
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

/** While the channel is not running: 503 (the error envelope), which makes Slack deliver the event again later. */
/** bolt's empty refusals as our codes. */
function receiverRefusal(status: number): AppError {
  if (status === 401) return new AppError('UNAUTHORIZED', 'The Slack request signature is missing, stale or wrong.');
  if (status === 413) return new AppError('PAYLOAD_TOO_LARGE', 'The Slack request body is too large.');
  return new AppError('BAD_REQUEST', 'The Slack request body could not be read or parsed.');
}

/**
 * A listener's error, unwrapped from bolt's (it wraps them, several for several listeners): a
 * refusal of ours as it is; anything else a 503, so that Slack delivers the event again (the
 * message was not stored: the database or the queue failed).
 */
function listenerRefusal(error: unknown): AppError {
  let cause: unknown = error;
  for (let depth = 0; depth < 5 && cause && typeof cause === 'object' && !(cause instanceof AppError); depth += 1) {
    const wrapped = cause as { original?: unknown; originals?: unknown[] };
    cause = wrapped.original ?? wrapped.originals?.[0];
  }
  if (cause instanceof AppError && cause.status < 500) return cause;
  if (cause instanceof AppError || cause instanceof IngestFailure) {
    return new AppError('SERVICE_UNAVAILABLE', 'The Slack event could not be taken in; deliver it again later.', {
      cause: error,
      headers: { 'Retry-After': String(NOT_RUNNING_RETRY_AFTER_S) },
    });
  }
  // Anything else was thrown reading the payload (inside bolt or a listener): a signed body whose
  // fields have types Slack never sends. Delivering it again would fail the same way: a 422, not a 503.
  return AppError.validation(
    { body: [{ code: 'invalid_type', message: 'A field of the Slack payload has a type Slack never sends.' }] },
    'The Slack payload could not be read.',
  );
}

/** The hub could not store or queue a message (database, queue): Slack should deliver it again. */
class IngestFailure extends Error {}

function notRunning(): AppError {
  return new AppError('SERVICE_UNAVAILABLE', 'The Slack channel is not running; deliver again later.', {
    headers: { 'Retry-After': String(NOT_RUNNING_RETRY_AFTER_S) },
  });
}
