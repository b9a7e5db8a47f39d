import type { ApprovalProgress } from '../protocol/frames';
import type { SessionFrame } from './events';
import type { TurnOutcome } from './follow-turn';

/**
 * Posting into a chat that did not ask (issue 29): a webhook's or a schedule's answer is delivered
 * to `deliver: <channel>:<conversation>` through that chat channel's adapter. A channel that can do
 * it offers `ChannelAdapter.delivery`; one that cannot lacks it (the workflow is refused at save).
 */

/** One answer to post: a thread's first message (`thread` null) or a reply in it. */
export interface DeliveryRequest {
  /** The channel's conversation id: a Slack channel id (`C0123456789`), a Telegram chat id (`-1001234567890`). */
  conversation: string;
  /** The platform id of the thread's first message (Slack `ts`, Telegram `message_id`), or null: this post starts the thread. */
  thread: string | null;
  text: string;
}

/** What the platform answered: delivered only with its message id. */
export interface DeliveryReceipt {
  /** The platform's id of the posted message (the first one when the answer was split). */
  messageId: string;
  /**
   * The session key a person's reply in this thread arrives with (`slack::T1:C0123:1700000000.000100`),
   * so the reply continues the event's conversation (Slack: the thread; Telegram: a reply to this message).
   */
  replyKey: string | null;
}

/** A tool confirmation of an event's turn, asked in the delivery chat. */
export interface DeliveryQuestion {
  conversation: string;
  /** The thread's first message, or null before the thread has one. */
  thread: string | null;
  sessionId: string;
  /** `approval`: an approval policy governs the tool (issue 30): who may approve and how far it got. */
  request: { confirmation_id: string; tool: string; parameters: Record<string, unknown>; message: string; approval?: ApprovalProgress };
}

/** An event's turn shown live in the delivery chat, the way the channel shows its own turns. */
export interface LiveDeliveryRequest {
  conversation: string;
  /** The thread's first message, or null: this answer starts the thread. */
  thread: string | null;
  sessionId: string;
  turnId: string;
  /** What the chat is told when the turn fails or is cancelled (instead of the channel's own apology). */
  failureNote(outcome: { kind: 'error'; code: string } | { kind: 'cancelled' }): string;
  /**
   * Told at once when the first message reached the chat; the surface waits for it before its next
   * call, so the id is recorded before anything else (a delivery resumed after a crash finds it).
   */
  onPosted(receipt: DeliveryReceipt): Promise<void>;
}

/** A turn being shown in the delivery chat (the channel's own presenter: native streaming, edits, or posts). */
export interface LiveDelivery {
  frame(frame: SessionFrame): void;
  /** Shows the ending (the answer, or the failure note); resolves with the first message's receipt, or null when none reached the chat. */
  end(outcome: TurnOutcome): Promise<DeliveryReceipt | null>;
}

/** A chat channel's capability to post an answer into one of its conversations. */
export interface ChatDelivery {
  /**
   * Shows an event's turn as it runs, like a turn of the channel's own (its presenter and cadence).
   * Absent: the answer is posted whole once the turn is done.
   */
  present?(request: LiveDeliveryRequest): Promise<LiveDelivery>;
  /**
   * Replaces the text of a message this delivery posted (a delivery resumed after its process died
   * finishes the message it had started, rather than posting a second one).
   */
  replace?(request: { conversation: string; messageId: string; text: string }): Promise<void>;
  /** Asks for a tool confirmation with the channel's buttons (they answer it like any of its confirmations). */
  ask?(question: DeliveryQuestion): Promise<void>;
  /**
   * Posts `request.text` once. Resolves only when the platform returned a message id; rejects on a
   * platform failure (the caller retries with backoff, and never posts again after a success).
   */
  post(request: DeliveryRequest): Promise<DeliveryReceipt>;
}

/** A `deliver` value's parts: `slack:C0123` → `{channel: 'slack', conversation: 'C0123'}`; null when malformed. */
export function parseDeliverTarget(value: string): { channel: string; conversation: string } | null {
  const match = /^([a-z][a-z0-9_-]{0,31}):([A-Za-z0-9._-]{1,64})$/.exec(value);
  return match ? { channel: match[1]!, conversation: match[2]! } : null;
}
