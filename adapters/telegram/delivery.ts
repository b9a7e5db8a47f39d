import type { ChatDelivery, DeliveryQuestion, DeliveryReceipt, DeliveryRequest } from '../../src/core/delivery';
import { confirmationKeyboard } from './render';
import { splitMessage } from './split';
import type { TelegramSender } from './sender';

/** Telegram's longest message text. */
const MAX_MESSAGE_CHARS = 4_096;

/**
 * Posting an event's answer into a Telegram chat (issue 29): the thread's first message on its own,
 * later ones as replies to it, through the bot's sender (its send budget and 429 pauses). A long
 * answer is split; the first piece's id is the receipt. Telegram chats are one session each, so a
 * person's reply is not told apart by thread (`replyKey` null).
 */
export function telegramDelivery(sender: () => TelegramSender): ChatDelivery {
  return {
    ask: async ({ conversation, thread, sessionId, request }: DeliveryQuestion) => {
      const id = Number(conversation);
      const reply = thread ? { reply_parameters: { message_id: Number(thread), allow_sending_without_reply: true } } : {};
      await sender().send({ id, group: id < 0 }, request.message, { reply_markup: confirmationKeyboard(sessionId, request.confirmation_id), ...reply });
    },
    post: async ({ conversation, thread, text }: DeliveryRequest): Promise<DeliveryReceipt> => {
      const id = Number(conversation);
      if (!Number.isSafeInteger(id)) throw new Error(`not a Telegram chat id: ${conversation}`);
      // Negative ids are groups and channels (the budget paces them as groups).
      const chat = { id, group: id < 0 };
      let first: number | null = null;
      for (const piece of splitMessage(text === '' ? '…' : text, MAX_MESSAGE_CHARS)) {
        const replyTo = thread ?? (first === null ? null : String(first));
        const extra = replyTo ? { reply_parameters: { message_id: Number(replyTo), allow_sending_without_reply: true } } : undefined;
        const sent = await sender().send(chat, piece, extra);
        first ??= sent.message_id;
      }
      if (first === null) throw new Error('Telegram answered sendMessage without a message id');
      return { messageId: String(first), replyKey: null };
    },
  };
}
