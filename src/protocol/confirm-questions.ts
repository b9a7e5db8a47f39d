import type { ApprovalProgress, FramePayload } from './frames';

type ConfirmRequest = FramePayload<'tool_confirm_request'>;

/** How many asked confirmation ids a client remembers (a turn asks a few; older ones are long decided). */
export const ASKED_REMEMBERED = 64;

/**
 * What a `tool_confirm_request` is to a client that asks a person (the Web UI's dialog, the CLI's
 * prompt), shared so both decide alike:
 * - `ask`: a question to put up;
 * - `progress`: an approval already asked in this conversation (issue 30), sent again as clicks count
 *   ("1 of 2") or as it escalates. It updates an open question in place and is otherwise shown as a
 *   status line: a question the person answered or closed never opens again.
 *
 * A plain confirmation asked again (the hub re-asks when an answer may have been lost) is `ask`.
 */
export function confirmStep(asked: readonly string[], request: ConfirmRequest): 'ask' | 'progress' {
  return request.approval !== undefined && asked.includes(request.confirmation_id) ? 'progress' : 'ask';
}

/** `asked` with `request`'s id remembered (at most `ASKED_REMEMBERED`, newest last); the same list when it was there. */
export function rememberAsked(asked: readonly string[], request: ConfirmRequest): readonly string[] {
  if (asked.includes(request.confirmation_id)) return asked;
  return [...asked, request.confirmation_id].slice(-ASKED_REMEMBERED);
}

/** A counted click, or an escalation, as a conversation shows it: `Approved by bob (1 of 2). Waiting for approval by … (1 of 2).` */
export function approvalNote(progress: ApprovalProgress): string {
  const by = progress.approved_by.length > 0 ? `Approved by ${progress.approved_by.join(', ')} (${progress.approvals} of ${progress.quorum}).` : '';
  return [by, `${progress.text}.`].filter(Boolean).join(' ');
}
