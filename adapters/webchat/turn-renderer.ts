import { WORKING_STATES, type SessionFrame } from '../../src/core/events';
import { errorText, type TurnOutcome } from '../../src/core/follow-turn';
import { APOLOGY_TEXT, CANCELLED_TEXT, confirmationMessage, EMPTY_ANSWER_TEXT, sanitizeMarkdown, takeParagraphs, textMessages, type BotMessage } from './render';

/** What the adapter does for a turn's frame: say something, show or hide typing, or refuse a tool. */
export type WidgetOutput =
  | { kind: 'say'; message: BotMessage }
  | { kind: 'typing'; on: boolean }
  /** `confirmations: refuse`: the call is denied instead of asking the visitor (only that call: the tool stays in the session). */
  | { kind: 'refuse'; confirmationId: string; tool: string };

export interface TurnRendererOptions {
  /** `paragraphs`: each paragraph as soon as it is complete; `final`: the whole answer at the end. */
  stream: 'paragraphs' | 'final';
  confirmations: 'buttons' | 'refuse';
  /** Per workflow name, instead of `confirmations` for the turns it answers. */
  workflowConfirmations?: Readonly<Record<string, 'buttons' | 'refuse'>>;
}

/**
 * One turn, as the widget can show it: typing while the agent works (not while it waits for the
 * visitor's choice), the answer per paragraph as it streams or whole at the end, confirmations as
 * quick replies, errors as a short apology. Pure: frames in (in seq order, from the core's turn
 * follower), outputs out.
 */
export class TurnRenderer {
  private buffer = '';
  private said = false;
  private typing = false;

  constructor(private readonly options: TurnRendererOptions) {}

  push(frame: SessionFrame): WidgetOutput[] {
    switch (frame.type) {
      case 'agent_state':
        return WORKING_STATES.has(frame.payload.state) ? this.setTyping(true) : [];
      case 'token':
        this.buffer += frame.payload.text;
        return [...this.setTyping(true), ...this.completeParagraphs()];
      case 'tool_start':
      case 'tool_end':
        return this.setTyping(true);
      case 'tool_confirm_request': {
        const { confirmation_id: confirmationId, tool, message, workflow } = frame.payload;
        const rule = (workflow ? this.options.workflowConfirmations?.[workflow] : undefined) ?? this.options.confirmations;
        if (rule === 'refuse') return [{ kind: 'refuse', confirmationId, tool }];
        // What streamed before the question comes first; then the turn waits for the visitor.
        return [...this.flush(), ...this.setTyping(false), { kind: 'say', message: confirmationMessage(message, confirmationId) }];
      }
      case 'error':
      case 'memory_update':
      case 'done':
      case 'pong':
        return [];
      default:
        return frame satisfies never;
    }
  }

  /** The turn ended: the rest of the answer, an apology or a note, and typing off. */
  finish(outcome: TurnOutcome): WidgetOutput[] {
    const off = this.setTyping(false);
    switch (outcome.kind) {
      case 'done': {
        // `done.text` is the whole streamed text; a turn that streamed nothing still has its answer there.
        const rest = this.said || this.buffer.trim() ? this.flush() : this.say(textMessages(outcome.done.text, this.options.stream === 'paragraphs'));
        return [...rest, ...(this.said ? [] : this.say([{ text: EMPTY_ANSWER_TEXT }])), ...off];
      }
      case 'cancelled':
        return [...this.flush(), ...this.say([{ text: CANCELLED_TEXT }]), ...off];
      case 'error':
        // A refusal meant for the visitor (a daily budget) says why; anything else is an apology.
        return [...this.flush(), ...this.say([{ text: errorText(outcome, APOLOGY_TEXT) }]), ...off];
      // Answered with an earlier message (collect), dropped before it ran, or the adapter stopped.
      case 'merged':
      case 'dropped':
      case 'stopped':
        return off;
      default:
        return outcome satisfies never;
    }
  }

  private completeParagraphs(): WidgetOutput[] {
    if (this.options.stream !== 'paragraphs') return [];
    const { paragraphs, rest } = takeParagraphs(this.buffer);
    this.buffer = rest;
    return this.say(paragraphs.map((paragraph) => ({ text: sanitizeMarkdown(paragraph) })));
  }

  /** Everything streamed and not yet said. */
  private flush(): WidgetOutput[] {
    const text = this.buffer;
    this.buffer = '';
    return this.say(textMessages(text, this.options.stream === 'paragraphs'));
  }

  private say(messages: BotMessage[]): WidgetOutput[] {
    if (messages.length > 0) this.said = true;
    return messages.map((message) => ({ kind: 'say', message }));
  }

  private setTyping(on: boolean): WidgetOutput[] {
    if (this.typing === on) return [];
    this.typing = on;
    return [{ kind: 'typing', on }];
  }
}
