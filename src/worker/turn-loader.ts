import type { MessageRecord, SessionRecord, TurnStore, UsageQuery, UsageToday } from '../db/turn-store';
import { ConversationCache } from './conversation-cache';

/** A turn's session and conversation, read for a job; or why the job's turn does not run again. */
export type LoadedTurn =
  | { kind: 'runnable'; session: SessionRecord; messages: MessageRecord[]; userMessage: MessageRecord; usage?: UsageToday }
  /** Redelivered after its reply was stored: the reply is announced again, the model not asked again. */
  | { kind: 'answered'; session: SessionRecord; reply: MessageRecord }
  /** Answered by a `collect` turn that took it in while it waited. */
  | { kind: 'answered_before'; session: SessionRecord }
  /** Its session or its message was deleted meanwhile. */
  | { kind: 'gone'; session: SessionRecord | null };

/**
 * Reads what a turn needs in one statement: the session and its conversation window. A worker keeps
 * the conversations it ran (ConversationCache), so a session's next turn on this worker reads only
 * what is new; `keep` and `forget` are called as each turn ends.
 */
export class TurnLoader {
  private readonly conversations = new ConversationCache();

  constructor(private readonly store: TurnStore) {}

  async load(sessionId: string, turnId: string, usage?: UsageQuery): Promise<LoadedTurn> {
    const loaded = await this.conversation(sessionId, turnId, usage);
    if (!loaded) return { kind: 'gone', session: null };
    // The turn's own rows are the newest: looked for from the end.
    const userMessage = findLast(loaded.messages, (message) => message.id === turnId);
    const answered = findLast(loaded.messages, (message) => message.reply_to === turnId, userMessage);
    if (answered) return { kind: 'answered', session: loaded.session, reply: answered };
    if (!userMessage) return { kind: 'gone', session: loaded.session };
    if (userMessage.ordinal <= (loaded.session.answered_through ?? 0)) return { kind: 'answered_before', session: loaded.session };
    return { kind: 'runnable', session: loaded.session, messages: loaded.messages, userMessage, ...(loaded.usage ? { usage: loaded.usage } : {}) };
  }

  /** Keeps the conversation as this worker leaves it (its reply included) and the `updated_at` it wrote. */
  keep(sessionId: string, updatedAt: Date, messages: MessageRecord[]): void {
    this.conversations.keep(sessionId, updatedAt, messages);
  }

  forget(sessionId: string): void {
    this.conversations.forget(sessionId);
  }

  /**
   * The session and its conversation window: only what is new when this worker ran the session's
   * last turn (and nothing touched the session since), else the whole window.
   */
  private async conversation(sessionId: string, turnId: string, usage?: UsageQuery) {
    const after = this.conversations.readAfter(sessionId);
    const loaded = await this.store.loadConversation(sessionId, after, usage);
    if (!loaded || after === undefined) return loaded;
    const joined = this.conversations.join(sessionId, loaded.session.updated_at, loaded.session.memory_through, loaded.messages);
    // A message stored while the last turn ran sits before that turn's reply, so the rows read after
    // the reply miss it: the turn's own message not among the new rows means the window is read afresh.
    if (joined && loaded.messages.some((message) => message.id === turnId)) return { session: loaded.session, messages: joined, usage: loaded.usage };
    this.conversations.forget(sessionId);
    return this.store.loadConversation(sessionId, undefined, usage);
  }
}

/** The last message that matches, searching back no further than `stopAt` (exclusive) when given. */
function findLast(messages: readonly MessageRecord[], matches: (message: MessageRecord) => boolean, stopAt?: MessageRecord): MessageRecord | undefined {
  for (let index = messages.length - 1; index >= 0; index -= 1) {
    const message = messages[index]!;
    if (matches(message)) return message;
    if (message === stopAt) return undefined;
  }
  return undefined;
}
