import { UniqueConstraintError } from 'sequelize';
import type { Actor } from '../core/actor';
import { actorKey } from '../core/actor';
import type { ApprovalRow, ApprovalVoteRow, Models } from '../db/models';

/** What the worker knows when a policy asks for approval of one tool call. */
export interface ApprovalRequest {
  sessionId: string;
  turnId: string;
  toolCallId: string;
  tool: string;
  workflow: string | null;
  policy: Record<string, unknown>;
  requester: string;
  sessionKey: string | null;
  message: string;
  parameters: Record<string, unknown>;
  expiresAt: Date;
}

export type ApprovalState = ApprovalRow['state'];
export const APPROVAL_STATES = ['pending', 'approved', 'denied', 'timed_out', 'abandoned'] as const satisfies readonly ApprovalState[];

/**
 * Approvals and their votes in the database: the record every process reads, so a click on any API
 * process counts and a worker that restarts finds the clicks already counted. Changes of state are
 * conditional (`WHERE state = 'pending'`): of a click and a timeout racing, one decides.
 */
export class ApprovalStore {
  constructor(private readonly models: Models) {}

  /** The approval of this tool call, created on first ask (`created`); a redelivered turn gets the same one back. */
  async open(request: ApprovalRequest, id: string): Promise<{ row: ApprovalRow; created: boolean }> {
    const existing = await this.byCall(request.turnId, request.toolCallId);
    if (existing) return { row: existing, created: false };
    try {
      const row = await this.models.Approval.create({
        id,
        session_id: request.sessionId,
        turn_id: request.turnId,
        tool_call_id: request.toolCallId,
        tool: request.tool,
        workflow: request.workflow,
        policy: request.policy,
        requester: request.requester,
        session_key: request.sessionKey,
        message: request.message,
        parameters: request.parameters,
        state: 'pending',
        action: null,
        stage: 0,
        expires_at: request.expiresAt,
        decided_by: null,
        decided_at: null,
        created_at: new Date(),
      });
      return { row, created: true };
    } catch (error) {
      if (!(error instanceof UniqueConstraintError)) throw error;
      return { row: (await this.byCall(request.turnId, request.toolCallId))!, created: false };
    }
  }

  find(id: string): Promise<ApprovalRow | null> {
    return this.models.Approval.findByPk(id);
  }

  private byCall(turnId: string, toolCallId: string): Promise<ApprovalRow | null> {
    return this.models.Approval.findOne({ where: { turn_id: turnId, tool_call_id: toolCallId } });
  }

  votes(approvalId: string): Promise<ApprovalVoteRow[]> {
    return this.models.ApprovalVote.findAll({ where: { approval_id: approvalId }, order: [['created_at', 'ASC']] });
  }

  /**
   * One vote per person and approval: a second click by the same person changes their vote, never
   * adds one. `voter`: who the person is (a platform user bound to a hub user votes as that user).
   */
  async vote(approvalId: string, stage: number, actor: Actor, action: string, hubUser: string | null, voter: string = actorKey(actor)): Promise<void> {
    const values = { approval_id: approvalId, voter, action, stage, actor: { ...actor }, hub_user: hubUser, created_at: new Date() };
    try {
      await this.models.ApprovalVote.create(values);
    } catch (error) {
      if (!(error instanceof UniqueConstraintError)) throw error;
      await this.models.ApprovalVote.update({ action, stage }, { where: { approval_id: approvalId, voter } });
    }
  }

  /** Decides a pending approval; false when it was no longer pending (someone else decided first). */
  async decide(id: string, state: Exclude<ApprovalState, 'pending'>, action: string, by: string): Promise<boolean> {
    const [changed] = await this.models.Approval.update({ state, action, decided_by: by, decided_at: new Date() }, { where: { id, state: 'pending' } });
    return changed > 0;
  }

  /** Moves a pending first-stage approval to its `escalate_to` approvers with a new deadline. */
  async escalate(id: string, expiresAt: Date): Promise<boolean> {
    const [changed] = await this.models.Approval.update({ stage: 1, expires_at: expiresAt }, { where: { id, state: 'pending', stage: 0 } });
    return changed > 0;
  }

  list(state: ApprovalState | null, limit: number): Promise<ApprovalRow[]> {
    return this.models.Approval.findAll({ where: state ? { state } : {}, order: [['created_at', 'DESC']], limit });
  }

  /** The tools an approver allowed for the rest of the session (`allow_all` on an approval). */
  async toolsAllowedForSession(sessionId: string): Promise<string[]> {
    const rows = await this.models.Approval.findAll({ attributes: ['tool'], where: { session_id: sessionId, state: 'approved', action: 'allow_all' } });
    return [...new Set(rows.map((row) => row.tool))];
  }
}
