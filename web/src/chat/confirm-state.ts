import { confirmStep, rememberAsked } from '../../../src/protocol/confirm-questions';
import type { FramePayload, SessionFrame } from '../../../src/protocol/frames';

export type ConfirmRequest = FramePayload<'tool_confirm_request'>;

/** The transcript's part about questions: the open dialog, what was asked, and an approval waited for with the dialog closed. */
export interface ConfirmState {
  /** The question the dialog shows; null: no dialog. */
  confirm: ConfirmRequest | null;
  /** Confirmation ids asked in this page's life (src/protocol/confirm-questions.ts). */
  asked: readonly string[];
  /** An approval (issue 30) the person answered or closed and others still decide: its progress, shown as a status line. */
  approvalWaiting: ConfirmRequest | null;
}

/** No question asked yet. */
export const NO_QUESTIONS: ConfirmState = { confirm: null, asked: [], approvalWaiting: null };

/**
 * A `tool_confirm_request` as the page shows it, by the protocol's rule: a new question opens the
 * dialog; an approval's progress updates the open dialog in place, or only the status line once the
 * person answered or closed it: it never opens again.
 */
export function onConfirmRequest<T extends ConfirmState>(state: T, request: ConfirmRequest): T {
  if (confirmStep(state.asked, request) === 'ask') return { ...state, confirm: request, asked: rememberAsked(state.asked, request), approvalWaiting: null };
  if (state.confirm?.confirmation_id === request.confirmation_id) return { ...state, confirm: request };
  return { ...state, approvalWaiting: request };
}

/** The dialog was answered (or closed): an approval still undecided stays visible as its status line. */
export function onConfirmClosed<T extends ConfirmState>(state: T): T {
  return { ...state, confirm: null, approvalWaiting: state.confirm?.approval ? state.confirm : state.approvalWaiting };
}

/** The turn moved on (a tool ran or was refused, the turn ended): no approval is waited for any more. */
export function movedOn(frame: SessionFrame): boolean {
  return frame.type === 'tool_start' || frame.type === 'tool_end' || frame.type === 'done' || (frame.type === 'agent_state' && frame.payload.state === 'idle');
}
