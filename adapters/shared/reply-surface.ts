import type { AgentEvent, AgentState } from '../../src/core/events';

/** A `tool_confirm_request`'s payload: what a person is asked. */
export type ConfirmRequest = Extract<AgentEvent, { type: 'tool_confirm_request' }>['payload'];

/**
 * What a chat channel supplies so that `adapters/shared/` can present a turn in it: a reply surface
 * for one inbound message (bound to its chat, thread and the message it answers), with optional
 * capabilities — a platform that cannot do something lacks the member, never a throwing stub — and
 * its update cadence as data. Everything else (following the turn by id, the interim cadence, the
 * fallbacks between streaming ways, confirmations, the outcome and its texts, shutdown) is written
 * once, in `turn-presenter.ts` and `chat-follower.ts`. A channel keeps only its platform calls and its
 * own budgets and limits.
 *
 * @example A channel that can post and edit (test/contract/throwaway-channel.test.ts):
 * const surface: ReplySurface = {
 *   cadence: { editIntervalMs: 500, failureNote: 'append', texts: { apology: 'Sorry.', cancelled: 'Cancelled.', busy: 'Busy.' } },
 *   post: async (text) => void (await room.send(text)),
 *   edit: { open: async (text) => (await room.send(text)).id, change: async (id, text) => room.edit(id, text).then(() => true) },
 * };
 */
export interface ReplySurface {
  readonly cadence: ReplyCadence;
  /** A whole message in the chat: an answer (or one piece of it), a note. `first`: the reply's first message (it may quote the question). */
  post(text: string, options: { first: boolean }): Promise<void>;
  /**
   * Native streaming (Slack's chat.startStream, Telegram's drafts) for this reply, or null when not
   * available here (no thread, turned off, refused for the workspace or bot). Absent: never.
   */
  stream?(): LiveReply | null;
  /** A message posted and then edited as the answer grows (the fallback of native streaming). */
  edit?: EditCapability;
  /** Shows what the agent does: typing, or a status line ("is running lookup…"). */
  status?(status: WorkStatus, again: boolean): Promise<void>;
  /** Asks a person to confirm a tool (buttons carrying the session's id). Absent: the question is posted as text. */
  ask?(request: ConfirmRequest, sessionId: string): Promise<void>;
  /** A channel rule answers the confirmation instead of a person: true when it did (then nothing is asked). */
  decide?(request: ConfirmRequest, sessionId: string): Promise<boolean>;
  /** A note only the sender sees (an ephemeral or private notice); absent: `post`. */
  notice?(text: string): Promise<void>;
  /** Marks the inbound message as waiting behind the running turn (a reaction), or clears the mark. */
  react?(waiting: boolean): Promise<void>;
}

/** A channel's update cadence and texts, as data. */
export interface ReplyCadence {
  /** Least time between two interim updates of a streamed answer (tokens are coalesced into one). */
  editIntervalMs: number;
  /** Longest text of one message: a longer answer is split (`splitMessage`). Absent: the surface takes any length (it cuts itself). */
  maxMessageChars?: number;
  /** An interim view that did not change is shown again after this long while the turn runs (a Telegram draft expires). */
  keepAliveMs?: number;
  /** The status is shown again this often on a long turn (Slack drops one after two minutes). */
  statusRefreshMs?: number;
  /**
   * A failed or cancelled turn: `replace` what streamed with the note (one message ends the reply:
   * Slack), or `append` the note after the streamed text, which stays (Telegram, the widget).
   */
  failureNote: 'replace' | 'append';
  /** Posted when the turn starts, on the edit way only (Slack's `_…_`). */
  placeholder?: string;
  /** Shown for an answer with no text at all. Absent: the empty text goes to the surface. */
  emptyText?: string;
  /**
   * Without native streaming and edits (the widget): each complete paragraph is posted as soon as it
   * streamed; false: the whole answer at the end.
   */
  paragraphs?: boolean;
  /** What the chat is told, in the channel's words. */
  texts: { apology: string; cancelled: string; busy: string };
}

/**
 * What the agent is doing, for `status`: `working` (thinking, writing…), `tool` (running one),
 * `confirm` (waiting for a person), `answering` (the ending goes out next: an indicator that must not
 * show after the answer stops here), `idle` (the turn is over).
 */
export type WorkStatus =
  { kind: 'working'; state: AgentState } | { kind: 'tool'; tool: string } | { kind: 'confirm'; tool: string } | { kind: 'answering' } | { kind: 'idle' };

/** What became of an interim update: shown, skipped (no free send slot: the next one carries the text), or this way is unavailable. */
export type InterimResult = 'shown' | 'skipped' | 'unavailable';

/** One way of showing an answer while it streams, and at its end. */
export interface LiveReply {
  /** A shown view expires (a draft) and is sent again every `cadence.keepAliveMs` while the turn runs. */
  readonly expires?: boolean;
  /** The turn started working. */
  begin?(): Promise<void>;
  /** Shows the answer so far (the whole text), using a free send slot only. Throws `ReplyUnavailable` to fall back. */
  update(text: string): Promise<InterimResult>;
  /** A question is asked next: what streamed (`streamed`, the text so far) and was not shown yet goes first. */
  beforeQuestion?(streamed: string): Promise<void>;
  /** The whole final text in pieces of at most the message limit; every piece arrives, in order. */
  finish(pieces: string[]): Promise<void>;
}

/** Post-then-edit: `open` posts a message and answers its id, `change` replaces its text. */
export interface EditCapability {
  /** `interim`: only with a free send slot (null when skipped); otherwise it waits for one. */
  open(text: string, options: { interim: boolean }): Promise<string | null>;
  /** `interim`: only with a free send slot (false when skipped); otherwise it waits for one. */
  change(id: string, text: string, options: { interim: boolean }): Promise<boolean>;
}

/** This way of streaming is not available for the reply: the presenter falls back to the next (edits, then posts). */
export class ReplyUnavailable extends Error {
  constructor(
    readonly reason: string,
    /** The platform refused the feature (remembered there), rather than failing this once. */
    readonly refused: boolean,
  ) {
    super(`native streaming unavailable: ${reason}`);
  }
}
