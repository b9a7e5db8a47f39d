import type { ConfirmRequest, ReplySurface, WorkStatus } from '../shared/reply-surface';
import { APOLOGY_TEXT, CANCELLED_TEXT, confirmationMessage, EMPTY_ANSWER_TEXT, sanitizeMarkdown, STILL_ANSWERING_TEXT, type BotMessage } from './render';

/** What the widget is sent for a turn: a message, or typing on or off (to every tab of the visitor, in turn order). */
export type WidgetOutput = { kind: 'say'; message: BotMessage } | { kind: 'typing'; on: boolean };

export interface WidgetSurfaceOptions {
  /** `paragraphs`: each paragraph as soon as it is complete; `final`: the whole answer at the end. */
  stream: 'paragraphs' | 'final';
  confirmations: 'buttons' | 'refuse';
  /** Per workflow name, instead of `confirmations` for the turns it answers. */
  workflowConfirmations?: Readonly<Record<string, 'buttons' | 'refuse'>>;
  /** To the visitor's conversation (every tab), or kept for the visitor while away. */
  deliver(output: WidgetOutput): void;
  /** A note to the socket that sent the message only (a refused message is the sender's business). */
  tell?(text: string): void;
  /** `confirmations: refuse`: the channel's rule answers the confirmation instead of the visitor. */
  refuse(sessionId: string, request: ConfirmRequest): Promise<void>;
}

/**
 * The website widget as a reply surface for one visitor message (the shared presenter shows the
 * turn): typing while the agent works (not while it waits for the visitor's choice), the answer per
 * paragraph as it streams or whole at the end (bot messages cannot be edited), confirmations as
 * quick replies — or refused by the channel's rule — and errors as a short apology.
 */
export function widgetSurface(options: WidgetSurfaceOptions): ReplySurface {
  let typing = false;
  const setTyping = (on: boolean) => {
    if (typing === on) return;
    typing = on;
    options.deliver({ kind: 'typing', on });
  };
  const status = async (work: WorkStatus): Promise<void> => {
    switch (work.kind) {
      case 'working':
      case 'tool':
        return setTyping(true);
      case 'confirm':
      case 'idle':
        return setTyping(false);
      case 'answering': // typing goes off after the answer (the widget shows both at once)
        return;
      default:
        work satisfies never;
    }
  };
  const say = (message: BotMessage) => options.deliver({ kind: 'say', message });
  return {
    cadence: {
      editIntervalMs: 0,
      paragraphs: options.stream === 'paragraphs',
      failureNote: 'append',
      emptyText: EMPTY_ANSWER_TEXT,
      texts: { apology: APOLOGY_TEXT, cancelled: CANCELLED_TEXT, busy: STILL_ANSWERING_TEXT },
    },
    post: async (text) => say({ text: sanitizeMarkdown(text) }),
    status,
    ask: async (request) => say(confirmationMessage(request.message, request.confirmation_id)),
    decide: async (request, sessionId) => {
      const rule = (request.workflow ? options.workflowConfirmations?.[request.workflow] : undefined) ?? options.confirmations;
      if (rule !== 'refuse') return false;
      await options.refuse(sessionId, request);
      return true;
    },
    ...(options.tell ? { notice: async (text: string) => options.tell!(text) } : {}),
  };
}
