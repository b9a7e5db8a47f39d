import type { ChatDelivery, DeliveryQuestion, DeliveryReceipt, DeliveryRequest, LiveDeliveryRequest } from '../../src/core/delivery';
import type { ReplySurface } from '../shared/reply-surface';
import { FirstMessage, presentDelivery } from '../shared/live-delivery';
import type { Logger } from 'pino';
import type { TelegramCalls } from './chat-surface';
import { telegramReplyKey } from './normalize';
import { confirmationKeyboard } from './render';
import { splitMessage } from './split';
import type { TelegramSender } from './sender';
import type { ChatTarget } from './telegram-budget';

/** Telegram's longest message text. */
const MAX_MESSAGE_CHARS = 4_096;

/** What the adapter lends an event's delivery: its sender, and its own reply surface for a chat. */
export interface TelegramDeliveryParts {
  sender(): TelegramSender;
  /** The chat's reply surface, as the channel's own turns get it (pace, typing, drafts in private chats). */
  surface(options: { chat: ChatTarget; replyTo: number | null; draftId: number | null; sender: TelegramCalls }): ReplySurface;
  logger: Logger;
}

/**
 * Posting an event's answer into a Telegram chat (issue 29): the thread's first message on its own,
 * later ones as replies to it, through the bot's sender (its send budget and 429 pauses), shown live
 * like the channel's own turns (a draft in a private chat, a message edited in place in a group). A
 * long answer is split; the first message's id is the receipt. A person who replies to a delivered
 * message continues the event's conversation (`replyKey`).
 */
export function telegramDelivery(parts: TelegramDeliveryParts): ChatDelivery {
  return {
    ask: async ({ conversation, thread, sessionId, request }: DeliveryQuestion) => {
      const chat = chatOf(conversation);
      await parts.sender().send(chat, request.message, { reply_markup: confirmationKeyboard(sessionId, request.confirmation_id), ...replyTo(thread) });
    },
    present: async (request: LiveDeliveryRequest) => {
      const chat = chatOf(request.conversation);
      const first = new FirstMessage(request, (id) => ({ messageId: id, replyKey: telegramReplyKey(chat.id, id) }));
      const sender = recording(parts.sender(), (id) => first.seen(id));
      // A draft id is any non-zero number unique in the chat: the turn id's first 48 bits.
      const draftId = chat.group ? null : Number.parseInt(request.turnId.replace(/-/g, '').slice(0, 12), 16) || 1;
      const surface = parts.surface({ chat, replyTo: request.thread === null ? null : Number(request.thread), draftId, sender });
      return presentDelivery(surface, request, first, { logger: parts.logger, channel: 'telegram' });
    },
    replace: async ({ conversation, messageId, text }) => {
      const [piece] = splitMessage(text === '' ? '…' : text, MAX_MESSAGE_CHARS);
      await parts.sender().edit(chatOf(conversation), Number(messageId), piece!);
    },
    post: async ({ conversation, thread, text }: DeliveryRequest): Promise<DeliveryReceipt> => {
      const chat = chatOf(conversation);
      let first: number | null = null;
      for (const piece of splitMessage(text === '' ? '…' : text, MAX_MESSAGE_CHARS)) {
        const sent = await parts.sender().send(chat, piece, replyTo(thread ?? (first === null ? null : String(first))));
        first ??= sent.message_id;
      }
      if (first === null) throw new Error('Telegram answered sendMessage without a message id');
      return { messageId: String(first), replyKey: telegramReplyKey(chat.id, String(first)) };
    },
  };
}

/** A `deliver` chat id as a send target: negative ids are groups and channels (the budget paces them as groups). */
function chatOf(conversation: string): ChatTarget {
  const id = Number(conversation);
  if (!Number.isSafeInteger(id)) throw new Error(`not a Telegram chat id: ${conversation}`);
  return { id, group: id < 0 };
}

function replyTo(thread: string | null) {
  return thread ? { reply_parameters: { message_id: Number(thread), allow_sending_without_reply: true } } : {};
}

/** The sender, telling `seen` the id of every message it sends (drafts and edits make none). */
function recording(sender: TelegramSender, seen: (id: number) => Promise<void>): TelegramCalls {
  return {
    get draftsRefused() {
      return sender.draftsRefused;
    },
    send: async (chat, text, extra) => {
      const sent = await sender.send(chat, text, extra);
      await seen(sent.message_id);
      return sent;
    },
    interimSend: async (chat, text, extra) => {
      const id = await sender.interimSend(chat, text, extra);
      if (id !== null) await seen(id);
      return id;
    },
    edit: (...args) => sender.edit(...args),
    interimEdit: (...args) => sender.interimEdit(...args),
    sendDraft: (...args) => sender.sendDraft(...args),
    react: (...args) => sender.react(...args),
  };
}
