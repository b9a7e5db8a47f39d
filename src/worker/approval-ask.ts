import type { ApprovalService } from '../approvals/approval-service';
import { approvalProgress } from '../approvals/approval-view';
import type { ApprovalPolicy } from '../approvals/policy-schema';
import { policyFor, type ToolOrigin } from '../approvals/policy-match';
import { cancelledBy } from '../agent/turn-stopped';
import type { ConfirmAction } from '../agent/tool-box';
import type { AgentEvent } from '../core/events';
import type { PendingConfirmation } from '../core/turns';
import type { ApprovalRow } from '../db/models';
import type { TurnLifecycle } from '../turns/turn-lifecycle';
import type { ConfirmationWaiters } from './turn-context';

/** What asking for an approval needs from the turn around it (TurnContext). */
export interface ApprovalTurn {
  sessionId: string;
  turnId: string;
  workflow: string | null;
  /** Who sent the turn's message: a user id, or `<channel>:<contact id>`. */
  requester: string;
  sessionKey: string | null;
  signal: AbortSignal;
  steered?: AbortSignal;
  emit(event: AgentEvent): Promise<void>;
  flush(): Promise<void>;
}

export interface ApprovalAskDeps {
  approvals: ApprovalService;
  waiters: ConfirmationWaiters;
  turns: TurnLifecycle;
}

/** A governed call's question: the executor's confirmation request plus the call's id. */
export interface ApprovalQuestion {
  tool: string;
  parameters: Record<string, unknown>;
  message: string;
  callId: string;
}

/** How a refused approval's outcome begins (the model reads it; chat channels show it). */
export const NOT_APPROVED = 'Not approved:';

/** What a decided approval means to the tool executor: a refused or timed-out one is a denial. */
function outcomeOf(row: ApprovalRow): ConfirmAction {
  if (row.state === 'approved') return row.action === 'allow_all' ? 'allow_all' : 'allow';
  if (row.state === 'denied' && row.action && row.action !== 'allow' && row.action !== 'allow_all') return row.action as ConfirmAction;
  return 'deny';
}

/**
 * The approvals of one turn (issue 30): which tools its workflow's policies govern, which an approver
 * allowed for the session, and asking: the approval is kept in the database (same one for a
 * redelivered turn: clicks counted stay counted), shown as a `tool_confirm_request` with its
 * progress (asked again as clicks count), and waited for until it is decided, times out (deny, or
 * escalate once) or the turn ends.
 */
export class TurnApprovals {
  private policies: readonly ApprovalPolicy[] = [];
  private readonly allowed = new Set<string>();
  private readonly denials = new Map<string, string>();

  constructor(
    private readonly deps: ApprovalAskDeps | null,
    /** An MCP tool's server and own name, from the MCP hub's name table (the model's name cannot be split back). */
    private readonly originOf: (tool: string) => ToolOrigin | undefined = () => undefined,
  ) {}

  /** The policies of the workflow the turn runs; the tools approvers allowed for the session are read only when there are some. */
  async load(policies: readonly ApprovalPolicy[], sessionId: string): Promise<void> {
    this.policies = policies;
    if (policies.length === 0) return;
    if (!this.deps) throw new Error('this workflow has approval policies, but this worker has no approval service');
    for (const tool of await this.deps.approvals.toolsAllowedForSession(sessionId)) this.allowed.add(tool);
  }

  governs(tool: string) {
    return policyFor(this.policies, tool, this.originOf(tool));
  }

  /** Whether an approver allowed `tool` for the rest of the session (`allow_all` on an approval). */
  allowedForSession(tool: string): boolean {
    return this.allowed.has(tool);
  }

  /** Why the last approval of `tool` in this turn was refused, for the model and the conversation. */
  denial(tool: string): string | null {
    return this.denials.get(tool) ?? null;
  }

  noteAllowed(tool: string): void {
    this.allowed.add(tool);
  }

  async ask(turn: ApprovalTurn, question: ApprovalQuestion, governed: { policy: ApprovalPolicy; index: number }): Promise<ConfirmAction> {
    const { approvals, waiters, turns } = this.deps!;
    const opened = await approvals.open(
      {
        ...question,
        toolCallId: question.callId,
        sessionId: turn.sessionId,
        turnId: turn.turnId,
        workflow: turn.workflow,
        requester: turn.requester,
        sessionKey: turn.sessionKey,
      },
      governed,
    );
    let wake: () => void = () => undefined;
    // A click counted on any process (approval_changed), or a control-bus gap: read it again.
    const { release } = waiters.wait(opened.id, () => Promise.resolve(wake()));
    let shown = '';
    try {
      for (;;) {
        // Armed before reading, so a change published while reading wakes the next wait.
        const wait = new Promise<void>((resolve) => (wake = resolve));
        const { row, votes } = await approvals.read(opened.id);
        if (row.state !== 'pending') return this.outcome(row);
        if (new Date(row.expires_at).getTime() <= Date.now()) {
          await approvals.expire(row.id);
          continue;
        }
        const progress = approvalProgress(row, votes);
        const pending: PendingConfirmation = {
          confirmation_id: row.id,
          tool: question.tool,
          parameters: question.parameters,
          message: `${question.message} ${progress.text}.`,
          workflow: turn.workflow,
          approval: progress,
        };
        if (JSON.stringify(pending) !== shown) {
          shown = JSON.stringify(pending);
          await turns.awaitConfirmation(turn, pending);
          await turn.emit({ type: 'tool_confirm_request', payload: pending });
          await turn.flush();
        }
        if ((await this.until(wait, row, turn)) === 'steered') {
          await approvals.abandon(row.id);
          this.denials.set(row.tool, `${NOT_APPROVED} a newer message steered the turn; "${row.tool}" did not run.`);
          return 'deny';
        }
      }
    } catch (error) {
      // Cancelled: nobody is asked any more. A shutdown leaves it pending for the redelivered turn.
      if (cancelledBy(turn.signal)) await approvals.abandon(opened.id).catch(() => undefined);
      throw error;
    } finally {
      release();
      await turns.awaitConfirmation(turn, null);
    }
  }

  /** The executor's action for a decided approval, noting why a refusal was given. */
  private outcome(row: ApprovalRow): ConfirmAction {
    const action = outcomeOf(row);
    if (row.state === 'timed_out') this.denials.set(row.tool, `${NOT_APPROVED} no approver approved "${row.tool}" in time; it did not run.`);
    else if (action === 'deny')
      this.denials.set(row.tool, `${NOT_APPROVED} an approver denied "${row.tool}"; it did not run. Do without it, or explain why it is needed.`);
    return action;
  }

  /** Waits for a change, the deadline, a steering message, or the turn's end (thrown). */
  private async until(changed: Promise<void>, row: ApprovalRow, turn: ApprovalTurn): Promise<'changed' | 'deadline' | 'steered'> {
    let timer: NodeJS.Timeout | undefined;
    let onAbort: (() => void) | undefined;
    let onSteer: (() => void) | undefined;
    try {
      return await Promise.race([
        changed.then(() => 'changed' as const),
        new Promise<'deadline'>((resolve) => {
          timer = setTimeout(() => resolve('deadline'), Math.max(0, new Date(row.expires_at).getTime() - Date.now()) + 5);
        }),
        new Promise<'steered'>((resolve) => {
          onSteer = () => resolve('steered');
          if (turn.steered?.aborted) onSteer();
          turn.steered?.addEventListener('abort', onSteer, { once: true });
        }),
        new Promise<never>((_, reject) => {
          onAbort = () => reject(turn.signal.reason instanceof Error ? turn.signal.reason : new Error(String(turn.signal.reason)));
          if (turn.signal.aborted) onAbort();
          turn.signal.addEventListener('abort', onAbort, { once: true });
        }),
      ]);
    } finally {
      clearTimeout(timer);
      if (onAbort) turn.signal.removeEventListener('abort', onAbort);
      if (onSteer) turn.steered?.removeEventListener('abort', onSteer);
    }
  }
}
