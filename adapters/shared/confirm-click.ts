import { isAppError } from '../../src/core/errors';
import type { ApprovalProgress, ConfirmAction } from '../../src/core/events';
import type { ConfirmResult } from '../../src/core/hub';

/** What a click on a confirmation button did, as a chat channel shows it. */
export type Click =
  /** A confirmation answered, or an approval decided (`action`: the outcome; null: the button's own). */
  | { kind: 'answered'; action: ConfirmAction | null }
  /** An approver's click counted toward the quorum; the question stays open. */
  | { kind: 'counted'; progress: ApprovalProgress }
  /** The clicker may not approve (or the platform could not say): nothing changed. */
  | { kind: 'refused'; reason: string }
  /** No longer pending (answered, timed out, the turn ended). */
  | { kind: 'stale' }
  /** The hub failed: logged by the channel, shown as stale. */
  | { kind: 'failed'; error: unknown };

/** How a tool call's error begins when its approval was refused or timed out (src/worker/approval-ask.ts). */
export const NOT_APPROVED_PREFIX = 'Not approved:';

/** The note for a stale click. */
export const STALE_TEXT = 'This confirmation is no longer pending.';

/** Runs `Hub.confirmTool` for a click and says what it did (issue 30: approvals count, refuse or decide). */
export async function confirmClick(run: () => Promise<ConfirmResult | void>): Promise<Click> {
  try {
    const result = await run();
    if (!result) return { kind: 'answered', action: null };
    const { approval } = result;
    return approval.decided === null ? { kind: 'counted', progress: approval.progress } : { kind: 'answered', action: approval.decided as ConfirmAction };
  } catch (error) {
    if (isAppError(error) && error.code === 'FORBIDDEN') return { kind: 'refused', reason: error.message };
    if (isAppError(error) && error.status < 500) return { kind: 'stale' };
    return { kind: 'failed', error };
  }
}

/** What only the clicker is told (an ephemeral message, an alert), or null: the click is shown to everyone. */
export function clickNote(click: Click): string | null {
  if (click.kind === 'refused') return click.reason;
  if (click.kind === 'counted') return `Your approval counts: ${click.progress.approvals} of ${click.progress.quorum}.`;
  return null;
}

/** A counted click, or an escalation, as the conversation shows it (one wording for chats and event deliveries). */
export { approvalNote } from '../../src/protocol/confirm-questions';
