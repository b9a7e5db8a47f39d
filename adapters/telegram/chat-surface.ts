import { TelegramError } from 'telegraf';
import type { ConfirmRequest, EditCapability, LiveReply, ReplySurface, WorkStatus } from '../shared/reply-surface';
import { APOLOGY_TEXT, CANCELLED_TEXT, confirmationKeyboard, PLACEHOLDER_TEXT, STILL_ANSWERING_TEXT, streamingView } from './render';
import type { TelegramSender } from './sender';
import type { ChatTarget } from './telegram-budget';
import type { TypingIndicator } from './typing';

/** The reaction on a message that waits for its turn (one of Telegram's allowed reaction emoji). */
export const WAITING_REACTION = '👀';

/** The Bot API calls a chat's replies make (TelegramSender: every one through the bot's send budget). */
export type TelegramCalls = Pick<TelegramSender, 'draftsRefused' | 'send' | 'edit' | 'interimSend' | 'interimEdit' | 'sendDraft' | 'react'>;

export interface ChatSurfaceOptions {
  sender: TelegramCalls;
  typing: Pick<TypingIndicator, 'hold'>;
  chat: ChatTarget;
  /** The user message the reply answers: its first message quotes it, and a waiting one gets the reaction. */
  replyTo: number | null;
  /** Non-zero id of this turn's draft (private chats); null streams the reply as edits. */
  draftId: number | null;
  /** Least time between two interim updates (drafts or edits): the chat's pace. */
  interimIntervalMs: number;
  /** A draft that did not change is sent again this often (Telegram drops it after about 30 s). */
  draftKeepAliveMs: number;
  maxMessageChars: number;
}

/**
 * A Telegram chat as a reply surface for one message (the shared presenter shows the turn): the
 * streamed text as a draft (private chats) or as a message edited in place (groups, or where drafts
 * are refused), "typing…" while the agent works (never after the answer), the answer split past
 * Telegram's limit, confirmations as inline keyboards, and 👀 on a message waiting for its turn. On
 * an error or cancel the streamed text stays and the note follows it.
 */
export function chatSurface(options: ChatSurfaceOptions): ReplySurface {
  const { sender, chat, replyTo } = options;
  let releaseTyping: (() => Promise<void>) | null = null;
  const typingOff = () => {
    const release = releaseTyping;
    releaseTyping = null;
    // Resolves once no typing action is on its way, so that a message sent next comes after it.
    return release ? release() : Promise.resolve();
  };
  const status = async (work: WorkStatus): Promise<void> => {
    switch (work.kind) {
      case 'working':
      case 'tool':
        if (!releaseTyping) releaseTyping = options.typing.hold(chat);
        return;
      case 'confirm': // the turn now waits for a person: no "typing…" until it goes on
      case 'answering':
      case 'idle':
        return typingOff();
      default:
        work satisfies never;
    }
  };
  return {
    cadence: {
      editIntervalMs: options.interimIntervalMs,
      maxMessageChars: options.maxMessageChars,
      keepAliveMs: options.draftKeepAliveMs,
      failureNote: 'append',
      emptyText: PLACEHOLDER_TEXT,
      texts: { apology: APOLOGY_TEXT, cancelled: CANCELLED_TEXT, busy: STILL_ANSWERING_TEXT },
    },
    post: async (text, { first }) => void (await sender.send(chat, text, first ? replyExtra(replyTo) : {})),
    // The user's message id is non-zero and unique in the chat: a fresh draft per turn.
    stream: () => (options.draftId !== null && sender.draftsRefused === null ? draftReply(options, options.draftId) : null),
    edit: editMessages(options),
    status,
    ask: async (request: ConfirmRequest, sessionId: string) => {
      await sender.send(chat, request.message, { reply_markup: confirmationKeyboard(sessionId, request.confirmation_id) });
    },
    ...(replyTo !== null ? { react: (waiting: boolean) => sender.react(chat, replyTo, waiting ? WAITING_REACTION : null) } : {}),
  };
}

function replyExtra(replyTo: number | null) {
  return replyTo === null ? {} : { reply_parameters: { message_id: replyTo, allow_sending_without_reply: true } };
}

/**
 * Private chats: the streamed text is the chat's draft (`sendMessageDraft`, animated by Telegram,
 * no message to edit), and the answer is one `sendMessage` per piece at the end. A draft is
 * ephemeral, so nothing but the final messages stays in the chat.
 */
function draftReply({ sender, chat, replyTo, maxMessageChars }: ChatSurfaceOptions, draftId: number): LiveReply {
  return {
    expires: true,
    update: async (text) => {
      const result = await sender.sendDraft(chat, draftId, streamingView(text, maxMessageChars));
      return result === 'refused' ? 'unavailable' : result;
    },
    finish: async (pieces) => {
      for (const [index, piece] of pieces.entries()) await sender.send(chat, piece, index === 0 ? replyExtra(replyTo) : {});
    },
  };
}

/**
 * Groups (and private chats where drafts are refused): the first view is a new message sent only
 * with a free slot, later views edit it (the latest part of an answer that outgrew one message), and
 * the final edit waits for its slot. A streamed message deleted meanwhile (or no longer editable,
 * 400) gets the answer as a new message.
 */
function editMessages({ sender, chat, replyTo, maxMessageChars }: ChatSurfaceOptions): EditCapability {
  return {
    open: async (text, { interim }) => {
      if (interim) {
        const id = await sender.interimSend(chat, streamingView(text, maxMessageChars), replyExtra(replyTo));
        return id === null ? null : String(id);
      }
      return String((await sender.send(chat, text, replyExtra(replyTo))).message_id);
    },
    change: async (id, text, { interim }) => {
      if (interim) return (await sender.interimEdit(chat, Number(id), streamingView(text, maxMessageChars))) === 'shown';
      try {
        await sender.edit(chat, Number(id), text);
      } catch (error) {
        if (!(error instanceof TelegramError) || error.code !== 400) throw error;
        await sender.send(chat, text, replyExtra(replyTo));
      }
      return true;
    },
  };
}
