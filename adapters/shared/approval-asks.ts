import { approvalNote } from './confirm-click';
import type { ConfirmRequest } from './reply-surface';

/** Approvals asked in one turn and the clicks counted so far (issue 30): a first ask, or progress on one. */
export class ApprovalAsks {
  private readonly counted = new Map<string, string>();

  /** `ask`: a question to show; `note`: a counted click (or an escalation) to say in the conversation. */
  seen(request: ConfirmRequest): { ask: boolean; note: string | null } {
    if (!request.approval) return { ask: true, note: null };
    const before = this.counted.get(request.confirmation_id);
    const now = `${request.approval.approvals}:${request.approval.escalated}`;
    this.counted.set(request.confirmation_id, now);
    if (before === undefined) return { ask: true, note: null };
    return { ask: false, note: now === before ? null : approvalNote(request.approval) };
  }
}
