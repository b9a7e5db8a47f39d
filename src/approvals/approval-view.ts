import type { ApprovalProgress } from '../core/events';
import type { ApprovalRow, ApprovalVoteRow } from '../db/models';
import { describeApprovers } from './approvers';
import { approvalPolicySchema, type ApprovalPolicy, type ApproverSet } from './policy-schema';

/** Actions that approve (they count toward the quorum); every other action of an approver decides alone. */
export const APPROVING_ACTIONS: ReadonlySet<string> = new Set(['allow', 'allow_all']);

/** The policy stored with an approval (as it was when asked) and its place in the workflow's list. */
export function storedPolicy(row: ApprovalRow): { policy: ApprovalPolicy; index: number } {
  const { index, ...policy } = row.policy as Record<string, unknown> & { index?: number };
  return { policy: approvalPolicySchema.parse(policy), index: typeof index === 'number' ? index : 0 };
}

/** Who may approve now: the policy's approvers, or `escalate_to` once escalated. */
export function currentApprovers(row: ApprovalRow): ApproverSet {
  const { policy } = storedPolicy(row);
  return row.stage > 0 && policy.escalate_to ? policy.escalate_to : policy.approvers;
}

/** The approving votes that count now (this stage's), one per person. */
export function countedVotes(row: ApprovalRow, votes: readonly ApprovalVoteRow[]): ApprovalVoteRow[] {
  return votes.filter((vote) => vote.stage === row.stage && APPROVING_ACTIONS.has(vote.action));
}

/** A voter's name for people: their hub username, else their platform name or id. */
export function voterName(vote: ApprovalVoteRow): string {
  const actor = vote.actor as { name?: string | null; id?: string };
  return vote.hub_user ?? actor.name ?? actor.id ?? vote.voter;
}

/** How far an approval got, as a `tool_confirm_request` carries it. */
export function approvalProgress(row: ApprovalRow, votes: readonly ApprovalVoteRow[]): ApprovalProgress {
  const { policy } = storedPolicy(row);
  const counted = countedVotes(row, votes);
  const approvers = describeApprovers(currentApprovers(row));
  return {
    approvers,
    quorum: policy.quorum,
    approvals: counted.length,
    approved_by: counted.map(voterName),
    escalated: row.stage > 0,
    expires_at: new Date(row.expires_at).toISOString(),
    text: `Waiting for approval by ${approvers} (${counted.length} of ${policy.quorum})${row.stage > 0 ? ', escalated' : ''}`,
  };
}

/** An approval as the API lists it (`GET /api/v1/approvals`). */
export function approvalView(row: ApprovalRow, votes: readonly ApprovalVoteRow[]) {
  const { policy, index } = storedPolicy(row);
  return {
    id: row.id,
    session_id: row.session_id,
    turn_id: row.turn_id,
    tool: row.tool,
    parameters: row.parameters,
    message: row.message,
    workflow: row.workflow,
    policy: { index, ...policy },
    requester: row.requester,
    state: row.state,
    action: row.action,
    progress: approvalProgress(row, votes),
    votes: votes.map((vote) => ({
      voter: vote.voter,
      name: voterName(vote),
      action: vote.action,
      escalated: vote.stage > 0,
      at: new Date(vote.created_at).toISOString(),
    })),
    created_at: new Date(row.created_at).toISOString(),
    decided_at: row.decided_at ? new Date(row.decided_at).toISOString() : null,
    decided_by: row.decided_by,
  };
}
export type ApprovalView = ReturnType<typeof approvalView>;
