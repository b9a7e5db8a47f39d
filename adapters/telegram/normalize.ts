import { channelOwner, formatSessionKey } from '../../src/core/channel';
import type { InboundMessage } from '../../src/core/inbound';
import type { Update } from 'telegraf/types';

/** This channel's name: in messages, session keys (`telegram::…`) and binding channels (`telegram`, `telegram:<chat id>`). */
export const TELEGRAM_CHANNEL = 'telegram';

/** One session per chat (decisions.md §3): private chats and groups alike. `telegram::<chat id>`. */
export function telegramSessionKey(chatId: number | string): string {
  return formatSessionKey(TELEGRAM_CHANNEL, String(chatId));
}

/**
 * The session key a reply to message `messageId` of the chat may continue (a delivered event answer
 * registers it as an alias of the event's session): `telegram::<chat id>/reply/<message id>`.
 */
export function telegramReplyKey(chatId: number | string, messageId: number | string): string {
  return formatSessionKey(TELEGRAM_CHANNEL, `${chatId}/reply/${messageId}`);
}

/** A text message the hub should take in, with where to answer it. */
export interface TelegramInbound {
  chatId: number;
  /** Private chats stream replies as drafts; groups have their own send limit. */
  chatType: 'private' | 'group' | 'supergroup';
  messageId: number;
  message: InboundMessage;
}

const CHAT_TYPES = new Set(['private', 'group', 'supergroup']);

/**
 * A Bot API update → the hub's InboundMessage, or null for what the channel ignores: non-text
 * messages, edits, channel posts, messages from bots, and commands addressed to another bot.
 * `botUsername` (from getMe) strips `/info@ThisBot` to `/info`, as groups send commands.
 */
export function normalizeUpdate(update: Update, botUsername: string | null): TelegramInbound | null {
  if (!('message' in update)) return null;
  const message = update.message;
  if (!('text' in message) || typeof message.text !== 'string') return null;
  if (!message.from || message.from.is_bot) return null;
  if (!CHAT_TYPES.has(message.chat.type)) return null;
  const text = normalizeCommand(message.text, botUsername);
  if (text === null || text.trim() === '') return null;
  const from = message.from;
  const displayName = [from.first_name, from.last_name].filter(Boolean).join(' ') || from.username || String(from.id);
  return {
    chatId: message.chat.id,
    chatType: message.chat.type as TelegramInbound['chatType'],
    messageId: message.message_id,
    message: {
      channel: TELEGRAM_CHANNEL,
      sessionKey: telegramSessionKey(message.chat.id),
      // A reply to a message of the bot may continue another session (an event's answer): the hub looks the key up.
      ...(message.reply_to_message?.from?.is_bot ? { continues: telegramReplyKey(message.chat.id, message.reply_to_message.message_id) } : {}),
      sender: { userId: channelOwner(TELEGRAM_CHANNEL), contactId: String(from.id), displayName },
      text,
      mode: 'normal',
      metadata: {},
      // The message's identity: Telegram redelivers an update until the webhook answers 200, and an
      // edit names the same message, so both find what was taken in.
      externalId: messageIdentity(message.chat.id, message.message_id),
      raw: update,
    },
  };
}

/** `<chat id>:<message id>`: a Telegram message's identity (unique per chat). */
export function messageIdentity(chatId: number, messageId: number): string {
  return `${chatId}:${messageId}`;
}

/** An `edited_message` update of a text message: which message, and its new text (commands normalised). */
export function normalizeEdit(update: Update, botUsername: string | null): { externalId: string; text: string } | null {
  if (!('edited_message' in update)) return null;
  const message = update.edited_message;
  if (!('text' in message) || typeof message.text !== 'string') return null;
  const text = normalizeCommand(message.text, botUsername);
  if (text === null || text.trim() === '') return null;
  return { externalId: messageIdentity(message.chat.id, message.message_id), text };
}

const COMMAND = /^\/([A-Za-z0-9_]+)@([A-Za-z0-9_]+)(?=\s|$)/;

/** `/info@ThisBot rest` → `/info rest`; a command for another bot → null; anything else unchanged. */
export function normalizeCommand(text: string, botUsername: string | null): string | null {
  const match = COMMAND.exec(text);
  if (!match) return text;
  if (botUsername && match[2]!.toLowerCase() !== botUsername.toLowerCase()) return null;
  return `/${match[1]}${text.slice(match[0].length)}`;
}
