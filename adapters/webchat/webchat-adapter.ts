import type { Socket } from 'socket.io';
import type { ChannelAdapter } from '../../src/core/channel';
import { isAppError } from '../../src/core/errors';
import type { Hub } from '../../src/core/hub';
import type { ConfirmAction } from '../../src/core/events';
import { DEMO_PATH, demoRoutes, TYPING_EVENT } from './demo-page';
import { HeldMessages } from './held-messages';
import { DistinctWindow, SlidingWindow } from './limits';
import { contactTags, parseConfirmPayload, parseUserUttered, requestedSessionId, toInbound, WEBCHAT_CHANNEL } from './normalize';
import {
  APOLOGY_TEXT,
  CLOSED_TEXT,
  NO_SESSION_TEXT,
  STALE_CONFIRMATION_TEXT,
  TOO_FAST_TEXT,
  TOO_MANY_SESSIONS_TEXT,
  tooLongText,
  UNREADABLE_TEXT,
  type BotMessage,
} from './render';
import { SessionIds } from './session-ids';
import { createSocketServer } from './socket-server';
import { NO_CHANNEL_TELEMETRY } from '../../src/core/telemetry';
import { ChatFollower } from '../shared/chat-follower';
import type { ConfirmRequest } from '../shared/reply-surface';
import { widgetSurface, type WidgetOutput } from './widget-surface';
import { WEBCHAT_DEFAULTS, type WebchatAdapterConfig } from './adapter-config';

const HOUR_MS = 3_600_000;
const MINUTE_MS = 60_000;

/** The room of a widget session: every tab of the visitor that has it open. */
const roomOf = (conversation: string) => `visitor:${conversation}`;

/** What a widget socket carries: the session it confirmed. */
interface VisitorData {
  conversation?: string;
}

/**
 * The website widget channel: Rasa Webchat's Socket.IO protocol. `session_request` → `session_confirm`
 * (an id the hub signs, kept by the widget across page loads), `user_uttered` → `Hub.ingest` as the
 * session `webchat::<conversation>`, and each turn followed by its id (the core's followTurn) back as
 * `bot_uttered` messages, with `bot_typing` while the agent works. Anonymous and public, so every
 * message passes the abuse limits first, and a socket only ever acts in the session it confirmed.
 */
export class WebchatAdapter implements ChannelAdapter {
  readonly name = 'webchat' as const;
  readonly rootRoutes: NonNullable<ChannelAdapter['rootRoutes']>;
  readonly upgrade: NonNullable<ChannelAdapter['upgrade']>;
  private hub: Hub | null = null;
  private readonly engine;
  private readonly io;
  private readonly ids: SessionIds;
  private readonly perSession: SlidingWindow;
  private readonly perAddress: DistinctWindow;
  private readonly held = new HeldMessages<BotMessage>({
    keepMs: WEBCHAT_DEFAULTS.heldKeepMs,
    perConversation: WEBCHAT_DEFAULTS.heldPerConversation,
    conversations: WEBCHAT_DEFAULTS.heldConversations,
  });
  /** Takes messages in and shows their turns (adapters/shared): this channel supplies the reply surface. */
  private readonly follower: ChatFollower;
  /** The hub session of each conversation seen here (for button clicks); dropped once nobody is there and no turn is open. */
  private readonly sessions = new Map<string, string>();
  /** Turns of each conversation showing "typing". */
  private readonly typing = new Map<string, number>();
  private sweeper: NodeJS.Timeout | null = null;

  constructor(private readonly config: WebchatAdapterConfig) {
    const { settings } = config;
    this.ids = new SessionIds(settings.session_secret);
    this.perSession = new SlidingWindow(settings.messages_per_session_per_minute, MINUTE_MS);
    this.perAddress = new DistinctWindow(settings.new_sessions_per_ip_per_hour, HOUR_MS);
    // Emits cost nothing and wait for no budget: nothing to give a grace at shutdown.
    this.follower = new ChatFollower({
      channel: 'webchat',
      logger: config.logger,
      telemetry: config.telemetry,
      leases: config.renderLeases,
      shutdownGraceMs: 0,
    });
    const allowed = new Set(settings.allowed_origins);
    ({ engine: this.engine, io: this.io } = createSocketServer({
      isAllowedOrigin: (origin) => allowed.has(origin) || config.allowedOrigins.has(origin),
      isDraining: () => this.hub === null || (config.draining?.() ?? false),
      maxPacketBytes: settings.max_message_chars * 6 + WEBCHAT_DEFAULTS.packetOverheadBytes,
    }));
    this.io.on('connection', (socket) => this.onConnection(socket));
    const path = settings.path;
    this.rootRoutes = [
      { path, handler: (request, response) => this.engine.handleRequest(request, response) },
      ...(settings.demo ? [{ path: DEMO_PATH, handler: demoRoutes(path) }] : []),
    ];
    this.upgrade = {
      matches: (pathname) => pathname === path || pathname.startsWith(`${path}/`),
      handle: async (request, socket, head) => this.engine.handleUpgrade(request, socket, head),
    };
  }

  async start(hub: Hub): Promise<void> {
    this.hub = hub;
    if (this.config.settings.session_secret === null) {
      this.config.logger.warn(
        'webchat: SERVICE_WEBCHAT_SESSION_SECRET is not set: widget sessions start anew when the hub restarts, and every API process needs the same secret',
      );
    }
    this.sweeper = setInterval(() => this.sweep(), WEBCHAT_DEFAULTS.sweepIntervalMs);
    this.sweeper.unref();
  }

  async stop(): Promise<void> {
    this.hub = null;
    if (this.sweeper) clearInterval(this.sweeper);
    await this.follower.stop(() => undefined);
    await this.io.close();
  }

  /** Forgets what no longer counts, so memory follows the visitors of the last hour. */
  private sweep(): void {
    this.perSession.sweep();
    this.perAddress.sweep();
    this.held.sweep();
    for (const [conversation, sessionId] of this.sessions) {
      if (!this.follower.isFollowing(sessionId) && !this.present(conversation)) this.sessions.delete(conversation);
    }
  }

  private present(conversation: string): boolean {
    return (this.io.sockets.adapter.rooms.get(roomOf(conversation))?.size ?? 0) > 0;
  }

  private onConnection(socket: Socket): void {
    const address = this.config.clientAddress(socket.request);
    // One event at a time per socket, in order: a message must be taken in before the next one.
    let inbox: Promise<void> = Promise.resolve();
    const handle = (work: () => Promise<void>) => {
      inbox = inbox.then(work).catch((error: unknown) => {
        this.config.logger.error({ err: error }, 'webchat: a widget event could not be handled');
        this.tell(socket, APOLOGY_TEXT);
      });
    };
    const telemetry = this.config.telemetry ?? NO_CHANNEL_TELEMETRY;
    telemetry.socketOpened();
    socket.on('session_request', (data: unknown) => handle(async () => this.onSessionRequest(socket, data)));
    socket.on('user_uttered', (data: unknown) => {
      telemetry.frameReceived('user_uttered');
      handle(() => this.onUserUttered(socket, address, data));
    });
    socket.on('disconnect', () => telemetry.socketClosed());
    socket.on('disconnect', (reason) =>
      this.config.logger.debug({ conversation: (socket.data as VisitorData).conversation ?? null, reason }, 'webchat: a widget disconnected'),
    );
  }

  /** The widget's id when this hub issued it (a reload), else a new one; then what waited for it. */
  private onSessionRequest(socket: Socket, data: unknown): void {
    const claimed = requestedSessionId(data);
    const known = this.ids.verify(claimed);
    const session = known ? { id: claimed as string, conversation: known } : this.ids.issue();
    this.join(socket, session.conversation);
    // Rasa's server confirms with the bare id; the widget takes either that or {session_id}.
    socket.emit('session_confirm', session.id);
    if ((this.typing.get(session.conversation) ?? 0) > 0) socket.emit(TYPING_EVENT, { typing: true });
    for (const message of this.held.take(session.conversation)) socket.emit('bot_uttered', message);
  }

  private async onUserUttered(socket: Socket, address: string, data: unknown): Promise<void> {
    const hub = this.hub;
    const uttered = parseUserUttered(data);
    if (!hub || !uttered || uttered.message.trim() === '') return;
    let conversation = (socket.data as VisitorData).conversation ?? null;
    if (conversation === null) {
      // A client that skipped session_request may name a session it was given earlier.
      conversation = this.ids.verify(uttered.session_id);
      if (conversation === null) return this.tell(socket, NO_SESSION_TEXT);
      this.join(socket, conversation);
    }
    const { settings } = this.config;
    if (!this.perSession.take(conversation)) return this.tell(socket, TOO_FAST_TEXT);
    const choice = parseConfirmPayload(uttered.message);
    if (choice) return this.onChoice(socket, conversation, choice.confirmationId, choice.action);
    const chars = [...uttered.message].length;
    if (chars > settings.max_message_chars) return this.tell(socket, tooLongText(chars, settings.max_message_chars));
    if (uttered.message.includes('\u0000')) return this.tell(socket, UNREADABLE_TEXT);
    if (!this.perAddress.admit(address, conversation)) return this.tell(socket, TOO_MANY_SESSIONS_TEXT);
    const surface = this.surface(conversation, socket);
    const result = await this.follower.take(hub, toInbound(conversation, uttered.message, contactTags(uttered.customData), data), surface, (error) => {
      if (error.code !== 'CONFLICT') return false;
      this.restart(socket);
      return true;
    });
    if (result) this.sessions.set(conversation, result.sessionId);
  }

  /** A confirmation button: answered in this socket's own session only (a made-up id is refused by the hub). */
  private async onChoice(socket: Socket, conversation: string, confirmationId: string, action: ConfirmAction): Promise<void> {
    const sessionId = this.sessions.get(conversation);
    if (!sessionId || !this.hub) return this.tell(socket, STALE_CONFIRMATION_TEXT);
    try {
      // Who pressed the button: the audit trail names the visitor (an anonymous contact of this channel).
      await this.hub.confirmTool(sessionId, confirmationId, action, {
        kind: 'contact',
        channel: WEBCHAT_CHANNEL,
        id: conversation,
        name: `visitor ${conversation.slice(0, 8)}`,
      });
    } catch (error) {
      if (!isAppError(error)) throw error;
      this.tell(socket, STALE_CONFIRMATION_TEXT);
    }
  }

  /** The visitor's conversation as a reply surface for one message sent from `socket`. */
  private surface(conversation: string, socket: Socket) {
    const { settings } = this.config;
    return widgetSurface({
      stream: settings.stream,
      confirmations: settings.confirmations,
      workflowConfirmations: settings.workflow_confirmations,
      deliver: (output) => this.apply(conversation, output),
      tell: (text) => this.tell(socket, text),
      refuse: (sessionId, request) => this.refuse(conversation, sessionId, request),
    });
  }

  /** One output of a turn, in turn order: to every tab of the visitor, or kept until one comes back. */
  private apply(conversation: string, output: WidgetOutput): void {
    const room = roomOf(conversation);
    const present = this.present(conversation);
    switch (output.kind) {
      case 'say':
        if (present) this.io.to(room).emit('bot_uttered', output.message);
        else this.held.hold(conversation, output.message);
        return;
      case 'typing': {
        const count = Math.max(0, (this.typing.get(conversation) ?? 0) + (output.on ? 1 : -1));
        if (count === 0) this.typing.delete(conversation);
        else this.typing.set(conversation, count);
        if (present) this.io.to(room).emit(TYPING_EVENT, { typing: count > 0 });
        return;
      }
      default:
        output satisfies never;
    }
  }

  private async refuse(conversation: string, sessionId: string, request: ConfirmRequest): Promise<void> {
    const { confirmation_id: confirmationId, tool } = request;
    // Anonymous visitors do not approve tools: this call is denied and the agent goes on without it.
    // Denied, not disabled: a later turn of the session answered by a workflow with buttons still offers it.
    this.config.logger.info({ conversation, tool }, 'webchat: a tool that needs confirmation was refused (channels.webchat.confirmations: refuse)');
    if (!this.hub) return;
    // The channel's rule answered, not the visitor: the audit trail says so.
    const actor = { kind: 'system' as const, id: 'webchat-refuse', name: 'channels.webchat confirmations: refuse' };
    await this.hub.confirmTool(sessionId, confirmationId, 'deny', actor).catch((error: unknown) => {
      this.config.logger.warn({ err: error, session_id: sessionId }, 'webchat: could not refuse a tool confirmation');
    });
  }

  /** The visitor's session was closed (archived) by an admin: a new one, confirmed to the widget. */
  private restart(socket: Socket): void {
    const session = this.ids.issue();
    this.join(socket, session.conversation);
    socket.emit('session_confirm', session.id);
    this.tell(socket, CLOSED_TEXT);
  }

  private join(socket: Socket, conversation: string): void {
    const data = socket.data as VisitorData;
    if (data.conversation === conversation) return;
    if (data.conversation) void socket.leave(roomOf(data.conversation));
    data.conversation = conversation;
    void socket.join(roomOf(conversation));
  }

  /** A note to this socket only (a refused message is the sender's business, not the other tabs'). */
  private tell(socket: Socket, text: string): void {
    socket.emit('bot_uttered', { text } satisfies BotMessage);
  }
}
