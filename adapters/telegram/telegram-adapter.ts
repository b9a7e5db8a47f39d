import { Telegraf } from 'telegraf';
import type { CallbackQuery, Update } from 'telegraf/types';
import type { ChannelAdapter, ChannelReporter, ConnectionCheck } from '../../src/core/channel';
import { isAppError } from '../../src/core/errors';
import type { Hub } from '../../src/core/hub';
import { failureReason, loggableError, withFloodRetry } from './bot-api';
import { decodeCallbackData } from './callback-data';
import { chatSurface, type TelegramCalls } from './chat-surface';
import { TELEGRAM_DEFAULTS, type TelegramAdapterConfig } from './config';
import { normalizeEdit, normalizeUpdate, TELEGRAM_CHANNEL, type TelegramInbound } from './normalize';
import { ACTION_LABELS, answeredConfirmationText, STALE_CONFIRMATION_TEXT } from './render';
import { TelegramSender } from './sender';
import { ChatFollower } from '../shared/chat-follower';
import { countCalls } from './call-count';
import { NO_CHANNEL_TELEMETRY } from '../../src/core/telemetry';
import { TelegramSendBudget, type ChatTarget } from './telegram-budget';
import { TypingIndicator } from './typing';
import { TelegramApproverGroups } from './approver-groups';
import { clickNote, confirmClick } from '../shared/confirm-click';
import { telegramDelivery } from './delivery';
import { TELEGRAM_WEBHOOK_PATH, webhookHandler } from './webhook';
import { checkTelegramConnection, registerTelegramWebhook } from './webhook-registration';

/**
 * The Telegram channel: updates in (webhook route or long polling) → `Hub.ingest`; the session's
 * frames out → Bot API calls. It only translates: storage, routing and the agent are the hub's.
 * Every message it sends or edits, for every turn in every chat, spends the bot's one send budget.
 */
export class TelegramAdapter implements ChannelAdapter {
  readonly name = 'telegram' as const;
  readonly routes: ChannelAdapter['routes'];
  /** Posts webhook and schedule answers into Telegram chats (issue 29). */
  readonly delivery: ChannelAdapter['delivery'];
  private readonly bot: Telegraf;
  private hub: Hub | null = null;
  private botUsername: string | null = null;
  private polling: Promise<void> | null = null;
  /** Takes messages in and shows their turns (adapters/shared): this channel supplies the reply surface. */
  private readonly follower: ChatFollower;
  private readonly budget: TelegramSendBudget;
  private readonly sender: TelegramSender;
  private readonly typing: TypingIndicator;
  private readonly approvers: TelegramApproverGroups;

  constructor(private readonly config: TelegramAdapterConfig) {
    this.bot = new Telegraf(config.botToken, { telegram: { apiRoot: config.apiRoot, webhookReply: false } });
    // Counted only for a hub with metrics on: without, the calls stay exactly as telegraf makes them.
    if (config.telemetry && config.telemetry !== NO_CHANNEL_TELEMETRY) countCalls(this.bot.telegram, config.telemetry);
    this.budget = new TelegramSendBudget(config.sendLimits ?? TELEGRAM_DEFAULTS.sendLimits);
    this.sender = new TelegramSender({
      telegram: this.bot.telegram,
      budget: this.budget,
      botToken: config.botToken,
      maxAttempts: TELEGRAM_DEFAULTS.maxAttempts,
      maxRetryAfterMs: config.maxRetryAfterS * 1000,
      logger: config.logger,
    });
    this.delivery = telegramDelivery({
      sender: () => {
        if (!this.hub) throw new Error('telegram: the channel has not started');
        return this.sender;
      },
      surface: ({ chat, replyTo, draftId, sender }) => this.chatSurfaceFor(chat, replyTo, draftId, sender),
      logger: config.logger,
    });
    this.follower = new ChatFollower({
      channel: 'telegram',
      logger: config.logger,
      telemetry: config.telemetry,
      leases: config.renderLeases,
      shutdownGraceMs: TELEGRAM_DEFAULTS.stopGraceMs,
    });
    this.approvers = new TelegramApproverGroups(async (chatId, userId) => (await this.call(() => this.bot.telegram.getChatMember(chatId, userId))).status);
    this.typing = new TypingIndicator({
      send: (chat) => this.sender.typing(chat),
      intervalMs: config.typingIntervalMs ?? TELEGRAM_DEFAULTS.typingIntervalMs,
      onFailure: (error) => config.logger.debug({ err: loggableError(error, config.botToken) }, 'telegram: the typing action failed'),
    });
    if (config.mode === 'webhook') {
      if (!config.webhookSecret) throw new Error('telegram: webhook mode needs a webhook secret');
      this.routes = [
        {
          path: TELEGRAM_WEBHOOK_PATH,
          handler: webhookHandler({
            secret: config.webhookSecret,
            maxBytes: TELEGRAM_DEFAULTS.maxWebhookBytes,
            isRunning: () => this.hub !== null,
            receive: (update) => this.receive(update),
            onFailure: (error) => this.logFailure(error, 'telegram: an update could not be taken in'),
          }),
        },
      ];
    }
    // Long polling: an update that fails is logged; telegraf would otherwise stop polling.
    this.bot.use((context) => this.receive(context.update).catch((error: unknown) => this.logFailure(error, 'telegram: an update could not be taken in')));
  }

  /**
   * Checks the token with getMe (its answer names the bot, for group commands), then starts long
   * polling in polling mode. Throws with Telegram's reason; in both modes the channel only takes
   * updates once this succeeded (the webhook answers 503 until then, so Telegram delivers again).
   */
  async start(hub: Hub, reporter: ChannelReporter): Promise<void> {
    try {
      const me = await this.bot.telegram.getMe();
      this.bot.botInfo = me;
      this.botUsername = me.username;
    } catch (error) {
      throw new Error(`getMe failed: ${failureReason(error, this.config.botToken)}`);
    }
    // With a public URL, the webhook is registered on every start: nothing to do by hand (issue 33).
    if (this.config.mode === 'webhook' && this.config.publicUrl) {
      const { url } = await this.registerWebhook(this.config.publicUrl);
      this.config.logger.info({ url }, 'telegram: webhook registered');
    }
    if (this.config.mode === 'polling') {
      // launch() settles only when polling ends: by our stop(), or by an error (token revoked, 409 another poller).
      this.polling = this.bot.launch().catch((error: unknown) => {
        if (this.hub) reporter.failed(`long polling stopped: ${failureReason(error, this.config.botToken)}`);
      });
    }
    this.hub = hub;
  }

  /** `setWebhook` to `<publicUrl>/api/v1/channels/telegram/webhook` with the secret (webhook mode only). */
  registerWebhook(publicUrl: string): Promise<{ url: string }> {
    return registerTelegramWebhook(this.bot.telegram, this.config, publicUrl);
  }

  checkConnection(): Promise<ConnectionCheck> {
    return checkTelegramConnection(this.bot.telegram, this.config.botToken);
  }

  async stop(): Promise<void> {
    this.hub = null;
    if (this.polling) {
      try {
        this.bot.stop('shutdown');
      } catch {
        // telegraf throws when polling never got going (launch failed before it); nothing to stop then
      }
      await this.polling;
      this.polling = null;
    }
    this.typing.stopAll();
    // Replies waiting for a send slot get a short grace; after it their waits are abandoned.
    await this.follower.stop(() => this.budget.abandonWaiting());
  }

  /** One update: a text message to ingest, or a confirmation button click. Throws to be redelivered. */
  async receive(update: Update): Promise<void> {
    const hub = this.hub;
    if (!hub) throw new Error('telegram: the channel has not started');
    if ('callback_query' in update) return this.onButton(hub, update.callback_query);
    if ('edited_message' in update) return this.onEdit(hub, update);
    const inbound = normalizeUpdate(update, this.botUsername);
    if (!inbound) return;
    await this.follower.take(hub, inbound.message, this.surface(inbound));
  }

  /** An edited message: while it still waits for its turn, the turn answers the new text. */
  private async onEdit(hub: Hub, update: Update): Promise<void> {
    const edit = normalizeEdit(update, this.botUsername);
    if (edit) await hub.amendWaiting(TELEGRAM_CHANNEL, edit.externalId, edit.text);
  }

  /** The chat of `inbound` as a reply surface: its pace (the chat's send limit), drafts in private chats. */
  private surface(inbound: TelegramInbound) {
    const chat = chatTarget(inbound.chatId, inbound.chatType);
    return this.chatSurfaceFor(chat, inbound.messageId, inbound.chatType === 'private' ? inbound.messageId : null, this.sender);
  }

  /** A chat's reply surface (also an event delivery's): `draftId` null streams as edits; drafts only where configured. */
  private chatSurfaceFor(chat: ChatTarget, replyTo: number | null, draftId: number | null, sender: TelegramCalls) {
    return chatSurface({
      sender,
      typing: this.typing,
      chat,
      replyTo,
      draftId: this.config.drafts !== false ? draftId : null,
      interimIntervalMs: Math.max(this.config.editIntervalMs, this.budget.interimGapMs(chat)),
      draftKeepAliveMs: this.config.draftKeepAliveMs ?? TELEGRAM_DEFAULTS.draftKeepAliveMs,
      maxMessageChars: TELEGRAM_DEFAULTS.maxMessageChars,
    });
  }

  /** A click on a confirmation button → `tool_confirm`, the click answered, the choice shown. */
  private async onButton(hub: Hub, query: CallbackQuery): Promise<void> {
    const decoded = 'data' in query ? decodeCallbackData(query.data) : null;
    if (!decoded) {
      await this.answerQuery(query.id);
      return;
    }
    // Who pressed the button (the audit trail names the Telegram user), and whether they administer the chat, asked now.
    const name = [query.from.first_name, query.from.last_name].filter(Boolean).join(' ') || null;
    const actor = { kind: 'contact' as const, channel: TELEGRAM_CHANNEL, id: String(query.from.id), name };
    const chatId = query.message?.chat.id;
    const groups = chatId === undefined ? undefined : this.approvers.forClicker(chatId, query.from.id);
    const click = await confirmClick(() => hub.confirmTool(decoded.sessionId, decoded.confirmationId, decoded.action, actor, groups));
    if (click.kind === 'failed' && !isAppError(click.error)) throw click.error;
    // Refused, or counted toward a quorum: an alert only the clicker sees; the question and its buttons stay.
    const note = clickNote(click);
    if (note !== null) return this.answerQuery(query.id, note, click.kind === 'refused');
    if (click.kind === 'stale' || click.kind === 'failed') return this.answerQuery(query.id, STALE_CONFIRMATION_TEXT);
    await this.answerQuery(query.id, ACTION_LABELS[click.kind === 'answered' && click.action ? click.action : decoded.action]);
    const message = query.message;
    if (message && 'text' in message) {
      const chosen = click.kind === 'answered' && click.action ? click.action : decoded.action;
      const by = [query.from.first_name, query.from.last_name].filter(Boolean).join(' ') || String(query.from.id);
      // Not awaited: the edit may wait for a send slot; the click is answered already.
      void this.sender
        .edit(chatTarget(message.chat.id, message.chat.type), message.message_id, answeredConfirmationText(message.text, chosen, by))
        .catch((error: unknown) => this.logFailure(error, 'telegram: could not show the confirmation choice'));
    }
  }

  /**
   * Answers a button click (the spinner on the user's button stops). Telegram refuses an answer to a
   * query that is too old or answered already: that is logged, never thrown — the update was handled,
   * and a failed webhook answer would make Telegram deliver it again, forever.
   */
  private async answerQuery(queryId: string, text?: string, alert = false): Promise<void> {
    try {
      await this.call(() => this.bot.telegram.answerCbQuery(queryId, text, alert ? { show_alert: true } : undefined));
    } catch (error) {
      this.config.logger.warn({ err: loggableError(error, this.config.botToken) }, 'telegram: could not answer a button click (too old, or answered already)');
    }
  }

  private call<T>(request: () => Promise<T>): Promise<T> {
    return withFloodRetry(request, { maxAttempts: TELEGRAM_DEFAULTS.maxAttempts, maxRetryAfterMs: this.config.maxRetryAfterS * 1000 });
  }

  private logFailure(error: unknown, message: string): void {
    this.config.logger.error({ err: loggableError(error, this.config.botToken) }, message);
  }
}

function chatTarget(id: number, type: string): ChatTarget {
  return { id, group: type !== 'private' };
}
