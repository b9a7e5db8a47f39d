import { TelegramError } from 'telegraf';
import type { InterimResult, TelegramSender } from './sender';
import type { ChatTarget } from './telegram-budget';

/** How one turn's reply reaches the chat while it streams, and at its end. */
export interface ReplyStream {
  /** A shown view expires (a draft lasts about 30 s) and must be sent again while the turn runs. */
  readonly expires: boolean;
  /** Shows the text streamed so far, using a free send slot only. */
  update(view: string): Promise<InterimResult>;
  /** The whole answer, in pieces of at most the message limit; every piece arrives, in order. */
  finish(pieces: string[]): Promise<void>;
}

interface Target {
  sender: TelegramSender;
  chat: ChatTarget;
  /** The user message the reply answers: its first message quotes it (keeps group threads readable). */
  replyTo: number | null;
}

function replyExtra(replyTo: number | null) {
  return replyTo === null ? {} : { reply_parameters: { message_id: replyTo, allow_sending_without_reply: true } };
}

/**
 * Private chats: the streamed text is the chat's draft (`sendMessageDraft`, animated by Telegram,
 * no message to edit), and the answer is one `sendMessage` per piece at the end. A draft is
 * ephemeral, so nothing but the final messages stays in the chat.
 */
export class DraftReply implements ReplyStream {
  readonly expires = true;

  constructor(
    private readonly target: Target,
    private readonly draftId: number,
  ) {}

  update(view: string): Promise<InterimResult> {
    return this.target.sender.sendDraft(this.target.chat, this.draftId, view);
  }

  async finish(pieces: string[]): Promise<void> {
    const { sender, chat, replyTo } = this.target;
    for (const [index, piece] of pieces.entries()) await sender.send(chat, piece, index === 0 ? replyExtra(replyTo) : {});
  }
}

/**
 * Groups (and private chats where drafts are refused): the first view of the streamed text is a new
 * message, later views edit it, and at the end it becomes the answer's first piece; the other pieces
 * follow as new messages. Without a free slot no view is sent at all, and the answer is sent whole.
 */
export class EditReply implements ReplyStream {
  readonly expires = false;
  private messageId: number | null = null;
  private shown = '';

  constructor(private readonly target: Target) {}

  async update(view: string): Promise<InterimResult> {
    const { sender, chat, replyTo } = this.target;
    if (this.messageId === null) {
      this.messageId = await sender.interimSend(chat, view, replyExtra(replyTo));
      if (this.messageId === null) return 'skipped';
      this.shown = view;
      return 'shown';
    }
    const result = await sender.interimEdit(chat, this.messageId, view);
    if (result === 'shown') this.shown = view;
    return result;
  }

  async finish(pieces: string[]): Promise<void> {
    const { sender, chat, replyTo } = this.target;
    const [first, ...rest] = pieces;
    if (this.messageId === null) await sender.send(chat, first!, replyExtra(replyTo));
    else if (first !== this.shown) await this.editOrSend(this.messageId, first!);
    this.shown = first!;
    for (const piece of rest) await sender.send(chat, piece);
  }

  /** The streamed message may be gone (deleted in the chat) or no longer editable: then a new one. */
  private async editOrSend(messageId: number, text: string): Promise<void> {
    const { sender, chat, replyTo } = this.target;
    try {
      await sender.edit(chat, messageId, text);
    } catch (error) {
      if (!(error instanceof TelegramError) || error.code !== 400) throw error;
      await sender.send(chat, text, replyExtra(replyTo));
    }
  }
}
