import { randomUUID } from 'node:crypto';
import { actorKey, systemActor, type Actor } from '../core/actor';
import type { AuditSink } from '../core/audit';
import { AppError } from '../core/errors';
import type { ApproverGroups, ConfirmResult } from '../core/hub';
import type { ControlBus } from '../core/turns';
import type { ApprovalRow } from '../db/models';
import { parametersDigest } from '../audit/digest';
import { checkApprover, type HubUserLookup } from './approvers';
import { ApprovalStore, type ApprovalRequest, type ApprovalState } from './approval-store';
import { APPROVING_ACTIONS, approvalProgress, approvalView, countedVotes, currentApprovers, storedPolicy, type ApprovalView } from './approval-view';
import type { PlatformIdentityLookup } from './platform-identities';
import type { ApprovalPolicy } from './policy-schema';

export interface ApprovalServiceOptions {
  store: ApprovalStore;
  control: ControlBus;
  audit: AuditSink;
  users: HubUserLookup;
  /** Platform users bound to hub users (absent: none are). */
  identities?: PlatformIdentityLookup;
  now?: () => number;
}

/** Most approvals `GET /approvals` reads before filtering by approver. */
const LIST_SCAN_LIMIT = 500;

/**
 * Approvals by the right people (issue 30): opens an approval for a governed tool call, counts the
 * clicks of those who may approve (distinct people, never the requester unless `self_approval`),
 * decides on the quorum or a single refusal, times out (deny or escalate once), audits every step and
 * tells the worker waiting for it over the control bus (`approval_changed`).
 */
export class ApprovalService {
  private readonly now: () => number;

  constructor(private readonly options: ApprovalServiceOptions) {
    this.now = options.now ?? Date.now;
  }

  /** The approval of a governed call, created (and audited) on first ask; asked again it is the same one. */
  async open(request: Omit<ApprovalRequest, 'expiresAt' | 'policy'>, governed: { policy: ApprovalPolicy; index: number }): Promise<ApprovalRow> {
    const expiresAt = new Date(this.now() + governed.policy.timeout_s * 1000);
    const { row, created } = await this.options.store.open({ ...request, policy: { ...governed.policy, index: governed.index }, expiresAt }, randomUUID());
    if (created) {
      this.audit(row, 'approval.requested', requesterActor(row.requester), 'requested', {});
      await this.changed(row); // the approvers' Approvals pages show it at once
    }
    return row;
  }

  async read(id: string) {
    const row = await this.options.store.find(id);
    if (!row) throw new AppError('APPROVAL_NOT_FOUND', `No approval ${id}.`);
    return { row, votes: await this.options.store.votes(id) };
  }

  /**
   * A click (or API call) by `actor` on approval `id`: refused (FORBIDDEN, with a note for the clicker)
   * when they may not approve, else counted; it decides when it completes the quorum or refuses.
   */
  async click(id: string, action: string, actor: Actor, groups?: ApproverGroups, sessionId?: string): Promise<ConfirmResult> {
    const { store } = this.options;
    const row = await store.find(id);
    if (!row || (sessionId !== undefined && row.session_id !== sessionId)) throw new AppError('APPROVAL_NOT_FOUND', `No approval ${id}.`);
    if (row.state !== 'pending') throw new AppError('CONFLICT', `This approval is no longer pending (${row.state}).`);
    const refuse = (reason: string, hubUser: string | null): never => {
      this.audit(row, 'approval.click', actor, 'refused', { requested_action: action, reason, hub_user: hubUser });
      throw new AppError('FORBIDDEN', reason);
    };
    const { policy } = storedPolicy(row);
    // A platform user bound to a hub user clicks as that hub user: their roles count, and so does their vote once.
    const linked = actor.kind === 'contact' ? await this.linkedUser(actor.channel, actor.id) : null;
    const verdict = await checkApprover(currentApprovers(row), actor, this.options.users, groups, linked);
    const hubUser = verdict.hubUser ?? null;
    if ((await this.isRequester(row, actor, linked)) && !policy.self_approval) refuse('Your own request needs approval by someone else.', hubUser);
    if (!verdict.ok) refuse(verdict.reason, hubUser);
    await store.vote(id, row.stage, actor, action, hubUser, linked ? `user:${linked}` : actorKey(actor));
    this.audit(row, 'approval.click', actor, 'counted', { requested_action: action, hub_user: hubUser });
    const decided = await this.decideAfterVote(row, action, actor);
    const fresh = await this.read(id);
    await this.changed(row);
    return { approval: { counted: true, decided, progress: approvalProgress(fresh.row, fresh.votes) } };
  }

  /** A refusal decides at once; approvals decide when the quorum of distinct approvers is reached. */
  private async decideAfterVote(row: ApprovalRow, action: string, actor: Actor): Promise<string | null> {
    const { store } = this.options;
    if (!APPROVING_ACTIONS.has(action)) return (await this.decide(row, 'denied', action, actor)) ? action : null;
    const counted = countedVotes(row, await store.votes(row.id));
    if (counted.length < storedPolicy(row).policy.quorum) return null;
    // Allowed for the session only when every counted approver chose so; otherwise this call only.
    const outcome = counted.every((vote) => vote.action === 'allow_all') ? 'allow_all' : 'allow';
    return (await this.decide(row, 'approved', outcome, actor)) ? outcome : null;
  }

  /**
   * The deadline passed (the worker's timer, or a worker finding it passed on resume): escalates once
   * when the policy says so, else denies. Nothing when it is still running or no longer pending.
   */
  async expire(id: string): Promise<void> {
    const { row } = await this.read(id);
    if (row.state !== 'pending' || new Date(row.expires_at).getTime() > this.now()) return;
    const { policy } = storedPolicy(row);
    if (policy.on_timeout === 'escalate' && row.stage === 0 && policy.escalate_to) {
      if (await this.options.store.escalate(id, new Date(this.now() + policy.timeout_s * 1000))) {
        this.audit(row, 'approval.decided', systemActor('timeout'), 'escalated', {});
        await this.changed(row);
      }
      return;
    }
    await this.decide(row, 'timed_out', 'deny', systemActor('timeout'));
  }

  /** The turn ended while it waited (cancelled): the approval is closed so nobody is asked any more. */
  async abandon(id: string): Promise<void> {
    const row = await this.options.store.find(id);
    if (row) await this.decide(row, 'abandoned', 'deny', systemActor('turn_ended'));
  }

  private async decide(row: ApprovalRow, state: Exclude<ApprovalState, 'pending'>, action: string, actor: Actor): Promise<boolean> {
    if (!(await this.options.store.decide(row.id, state, action, actorKey(actor)))) return false;
    this.audit(row, 'approval.decided', actor, state, { outcome_action: action });
    await this.changed(row);
    return true;
  }

  private linkedUser(channel: string, platformUserId: string): Promise<string | null> {
    return this.options.identities ? this.options.identities(channel, platformUserId) : Promise.resolve(null);
  }

  /** Whether `actor` asked for the call: the same sender, or the same hub user behind a bound platform id (either side). */
  private async isRequester(row: ApprovalRow, actor: Actor, linked: string | null): Promise<boolean> {
    if (sameSender(row, actor)) return true;
    const clicker = actor.kind === 'user' ? actor.id : linked;
    if (clicker === null) return false;
    const split = row.requester.indexOf(':');
    const requester = split > 0 ? await this.linkedUser(row.requester.slice(0, split), row.requester.slice(split + 1)) : row.requester;
    return requester === clicker;
  }

  /** The approvals `userId` may decide (by role or username, at the current stage), newest first. */
  async listFor(userId: string, state: ApprovalState | null, limit: number): Promise<ApprovalView[]> {
    const rows = await this.options.store.list(state, LIST_SCAN_LIMIT);
    const mine: ApprovalView[] = [];
    for (const row of rows) {
      if (mine.length >= limit) break;
      const verdict = await checkApprover(currentApprovers(row), { kind: 'user', id: userId }, this.options.users);
      if (verdict.ok) mine.push(approvalView(row, await this.options.store.votes(row.id)));
    }
    return mine;
  }

  /** The tools approvers allowed for the rest of a session (`allow_all` on one of its approvals). */
  toolsAllowedForSession(sessionId: string): Promise<string[]> {
    return this.options.store.toolsAllowedForSession(sessionId);
  }

  private async changed(row: ApprovalRow): Promise<void> {
    await this.options.control.publish({ kind: 'approval_changed', sessionId: row.session_id, approvalId: row.id });
  }

  private audit(
    row: ApprovalRow,
    kind: 'approval.requested' | 'approval.click' | 'approval.decided',
    actor: Actor,
    action: string,
    details: Record<string, unknown>,
  ) {
    const { policy, index } = storedPolicy(row);
    this.options.audit.record({
      kind,
      actor,
      subject: row.tool,
      action,
      sessionId: row.session_id,
      details: {
        approval_id: row.id,
        turn_id: row.turn_id,
        requester: row.requester,
        workflow: row.workflow,
        policy: { index, tools: policy.tools, quorum: policy.quorum, stage: row.stage },
        ...parametersDigest(row.parameters),
        ...details,
      },
    });
  }
}

/** Whether `actor` sent the turn's message (a user id, or `<channel>:<contact id>`). */
function sameSender(row: ApprovalRow, actor: Actor): boolean {
  return actor.kind === 'user' ? actor.id === row.requester : actor.kind === 'contact' && `${actor.channel}:${actor.id}` === row.requester;
}

/** The requester as an audit actor: `slack:U123` is a contact of that channel, anything else a user id. */
function requesterActor(requester: string): Actor {
  const split = requester.indexOf(':');
  return split > 0 ? { kind: 'contact', channel: requester.slice(0, split), id: requester.slice(split + 1) } : { kind: 'user', id: requester };
}
