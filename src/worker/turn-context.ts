import { randomUUID } from 'node:crypto';
import { systemActor, type Actor } from '../core/actor';
import type { AuditSink } from '../core/audit';
import type { AgentEvent } from '../core/events';
import type { LoopPorts } from '../agent/model-loop';
import type { ToolCall } from '../agent/provider';
import type { ConfirmAction } from '../agent/tool-box';
import type { ToolOutcome } from '../agent/tool-executor';
import type { SessionRecord, TurnStore } from '../db/turn-store';
import type { SessionTools } from '../sessions/session-tools';
import { parametersDigest } from '../audit/digest';
import type { HubMetrics } from '../metrics/hub-metrics';
import { failed, SpanKind, type Span, type Tracing } from '../tracing/tracing';
import { toolCallsMessage, toolResultMessages } from './conversation';
import type { ApprovalService } from '../approvals/approval-service';
import { TurnApprovals } from './approval-ask';
import type { TurnEvents } from '../turns/turn-events';
import type { TurnLifecycle } from '../turns/turn-lifecycle';

/** A `tool_confirm` as the worker receives it: the action, and who chose it (when the channel said). */
export interface ConfirmAnswer {
  action: ConfirmAction;
  actor?: Actor;
}

export interface ConfirmationWaiters {
  /**
   * Registers a waiter for `confirmationId`; the worker resolves it when tool_confirm arrives, and
   * calls `askAgain` when answers may have been lost on the way (the control bus's connection dropped).
   */
  wait(confirmationId: string, askAgain?: () => Promise<void>): { answer: Promise<ConfirmAnswer>; release(): void };
}

/**
 * What the model loop and tool executor need from the world during one turn: emitting, confirming
 * (the pending confirmation lives in the turn registry), session-wide approvals, side-effect records
 * and the stored tool rounds (a redelivered turn resumes from them).
 */
export class TurnContext implements LoopPorts {
  readonly sessionId: string;
  readonly turnId: string;
  /** The workflow the turn was routed to (its name), once routed; named on confirmation requests. */
  workflow: string | null = null;
  /** Who sent the turn's message (a user id, or `<channel>:<contact id>`): the requester an approval policy names. */
  requester = '';
  /** The approval policies of the turn's workflow (issue 30), loaded once routed. */
  readonly approvals: TurnApprovals;

  constructor(
    private readonly deps: {
      store: TurnStore;
      /** The pending confirmation is kept with the running turn (src/turns writes a turn's state). */
      turns: TurnLifecycle;
      sessionTools: SessionTools;
      waiters: ConfirmationWaiters;
      confirmationTimeoutMs: number;
      /** Every confirmation and auto-approval is recorded here (batched; never awaited). */
      audit: AuditSink;
      metrics?: HubMetrics | null;
      tracing?: Tracing | null;
      /** Approvals by the right people (issue 30); absent: a workflow with approval policies fails loudly. */
      approvals?: ApprovalService | null;
    },
    private readonly events: TurnEvents,
    private readonly session: SessionRecord,
    readonly signal: AbortSignal,
    private readonly onCancel: () => void,
    /** A newer message steers: the turn ends at its next model or tool boundary. */
    readonly steered?: AbortSignal,
  ) {
    this.sessionId = session.id;
    this.turnId = events.turnId;
    this.approvals = new TurnApprovals(deps.approvals ? { approvals: deps.approvals, waiters: deps.waiters, turns: deps.turns } : null, (tool) =>
      deps.sessionTools.originOf(tool),
    );
  }

  denial(tool: string): string | null {
    return this.underPolicy(tool) ? this.approvals.denial(tool) : null;
  }

  /** Whether an approval policy governs `tool`: it is asked of its approvers even when it needs no confirmation. */
  underPolicy(tool: string): boolean {
    return this.approvals.governs(tool) !== null;
  }

  emit(event: AgentEvent): Promise<void> {
    if (this.signal.aborted) return Promise.resolve(); // once stopped, the cancel events are the last ones
    return this.events.send(event);
  }

  emitAll(events: readonly AgentEvent[]): Promise<void> {
    if (this.signal.aborted) return Promise.resolve();
    return this.events.sendAll(events);
  }

  async confirm(question: { tool: string; parameters: Record<string, unknown>; message: string; callId?: string }): Promise<ConfirmAction> {
    // The call's id names an approval; a plain confirmation carries exactly the spec's fields.
    const { callId, ...request } = question;
    const governed = this.approvals.governs(request.tool);
    if (governed) {
      if (!callId) throw new Error(`an approval of "${request.tool}" needs the call's id`);
      const turn = {
        sessionId: this.sessionId,
        turnId: this.turnId,
        workflow: this.workflow,
        requester: this.requester,
        sessionKey: this.session.session_key ?? null,
        signal: this.signal,
        steered: this.steered,
        emit: (event: AgentEvent) => this.emit(event),
        flush: () => this.events.flush(),
      };
      return this.approvals.ask(turn, { ...request, callId }, governed);
    }
    const confirmationId = randomUUID();
    const requestedAt = Date.now();
    const span =
      this.deps.tracing?.startSpan(`confirm ${request.tool}`, {
        attributes: { 'gen_ai.tool.name': request.tool, 'switchboard.confirmation_id': confirmationId },
      }) ?? null;
    let answer: ConfirmAnswer | null = null;
    try {
      answer = await this.ask(confirmationId, request);
      return answer.action;
    } catch (error) {
      if (span) failed(span, error);
      throw error;
    } finally {
      this.recordConfirmation(confirmationId, request, requestedAt, answer, span);
    }
  }

  /** Asks (the pending confirmation lives in the turn registry) and waits for the answer, a timeout or the turn's end. */
  private async ask(confirmationId: string, request: { tool: string; parameters: Record<string, unknown>; message: string }): Promise<ConfirmAnswer> {
    const pending = { confirmation_id: confirmationId, ...request, workflow: this.workflow };
    // An answer lost while the control bus reconnected: the question is asked again (same id).
    const { answer, release } = this.deps.waiters.wait(confirmationId, () => this.emit({ type: 'tool_confirm_request', payload: pending }));
    // Kept with the running turn, so a socket that connects meanwhile is asked again.
    await this.deps.turns.awaitConfirmation(this, pending);
    let timer: NodeJS.Timeout | undefined;
    try {
      await this.emit({ type: 'tool_confirm_request', payload: pending });
      await this.events.flush();
      const aborted = new Promise<never>((_, reject) => {
        const onAbort = () => reject(this.signal.reason instanceof Error ? this.signal.reason : new Error(String(this.signal.reason)));
        if (this.signal.aborted) onAbort();
        this.signal.addEventListener('abort', onAbort, { once: true });
      });
      const timedOut = new Promise<ConfirmAnswer>((resolve) => {
        // spec: a timeout counts as deny
        timer = setTimeout(() => resolve({ action: 'deny', actor: systemActor('timeout') }), this.deps.confirmationTimeoutMs);
        // The user moved on (a steering message): the tool is not run, as when denied.
        const steered = this.steered;
        const onSteer = () => resolve({ action: 'deny', actor: systemActor('steered') });
        if (steered?.aborted) onSteer();
        steered?.addEventListener('abort', onSteer, { once: true });
      });
      return await Promise.race([answer, timedOut, aborted]);
    } finally {
      clearTimeout(timer);
      release();
      // Confirmations of a turn are asked one at a time, so the pending one is this one.
      await this.deps.turns.awaitConfirmation(this, null);
    }
  }

  /**
   * The audit row (who answered, what, a digest of the parameters, how long it waited), the
   * confirmation metrics and the end of its span. No answer: the turn ended while it waited
   * (`abandoned`).
   */
  private recordConfirmation(
    confirmationId: string,
    request: { tool: string; parameters: Record<string, unknown> },
    requestedAt: number,
    answer: ConfirmAnswer | null,
    span: Span | null,
  ): void {
    const answeredAt = Date.now();
    const action = answer?.action ?? 'abandoned';
    const actor = answer ? (answer.actor ?? this.channelActor()) : systemActor('turn_ended');
    const waitedMs = answeredAt - requestedAt;
    this.deps.audit.record({
      kind: 'tool.confirmation',
      actor,
      subject: request.tool,
      action,
      sessionId: this.sessionId,
      at: new Date(answeredAt),
      details: {
        turn_id: this.turnId,
        confirmation_id: confirmationId,
        ...parametersDigest(request.parameters),
        requested_at: new Date(requestedAt).toISOString(),
        waited_ms: waitedMs,
      },
    });
    const outcome = actor.kind === 'system' ? actor.id : action; // timeout, steered, turn_ended: not a person's choice
    this.deps.metrics?.confirmation(request.tool, outcome, waitedMs / 1000);
    span?.setAttributes({
      'switchboard.confirmation.action': action,
      'switchboard.confirmation.outcome': outcome,
      'switchboard.confirmation.waited_ms': waitedMs,
    });
    span?.end(answeredAt);
  }

  /** Who answered when the channel did not say: the web session's owner, or an unnamed contact of the chat. */
  private channelActor(): Actor {
    return this.session.channel === 'web' ? { kind: 'user', id: this.session.owner_id } : { kind: 'contact', channel: this.session.channel, id: 'unknown' };
  }

  async observeTool(call: ToolCall, run: () => Promise<{ error: string | null }>): Promise<{ error: string | null }> {
    const { metrics, tracing } = this.deps;
    const started = performance.now();
    const attributes = { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': call.name, 'gen_ai.tool.call.id': call.id };
    const result = tracing
      ? await tracing.inSpan(`execute_tool ${call.name}`, { kind: SpanKind.INTERNAL, attributes }, async (span) => {
          const outcome = await run();
          if (outcome.error !== null) span.setAttribute('error.type', 'tool_error');
          return outcome;
        })
      : await run();
    metrics?.toolCall(call.name, result.error === null, (performance.now() - started) / 1000);
    return result;
  }

  autoApproved(tool: string, parameters: Record<string, unknown>): void {
    this.deps.metrics?.confirmation(tool, 'auto_approved', null);
    this.deps.audit.record({
      kind: 'tool.auto_approved',
      actor: systemActor('allow_all'),
      subject: tool,
      action: 'allow',
      sessionId: this.sessionId,
      details: { turn_id: this.turnId, ...parametersDigest(parameters) },
    });
  }

  isApproved(tool: string): boolean {
    // Under a policy only an approver's `allow_all` counts, never the requester's own.
    if (this.underPolicy(tool)) return this.approvals.allowedForSession(tool);
    return this.deps.sessionTools.state(this.session).approved.includes(tool);
  }

  isDisabled(tool: string): boolean {
    return this.deps.sessionTools.state(this.session).disabled.includes(tool);
  }

  approve(tool: string): Promise<void> {
    // Recorded on the approval itself (its action `allow_all`), which later turns of the session read.
    if (this.underPolicy(tool)) return Promise.resolve(this.approvals.noteAllowed(tool));
    return this.changeTools({ auto_approve: [tool] });
  }

  disable(tool: string): Promise<void> {
    return this.changeTools({ disable: [tool] });
  }

  claimSideEffect(callId: string, tool: string): Promise<boolean> {
    return this.deps.store.claimToolRun({ turnId: this.turnId, toolCallId: callId, sessionId: this.sessionId, name: tool });
  }

  finishSideEffect(callId: string, ok: boolean): Promise<void> {
    return this.deps.store.finishToolRun(this.turnId, callId, ok);
  }

  cancelTurn(): void {
    this.onCancel();
  }

  async startToolRound(content: string, calls: ToolCall[]): Promise<string> {
    const id = randomUUID();
    await this.deps.store.insertMessages([toolCallsMessage({ session_id: this.sessionId, turn_id: this.turnId }, content, calls, id)]);
    return id;
  }

  finishToolRound(roundId: string, calls: ToolCall[], outcomes: ToolOutcome[]): Promise<void> {
    const ended = toolResultMessages({ session_id: this.sessionId, turn_id: this.turnId }, calls, outcomes, randomUUID);
    return this.deps.store.finishToolRound(roundId, ended.calls, ended.results);
  }

  private async changeTools(changes: Parameters<SessionTools['apply']>[1]): Promise<void> {
    this.deps.sessionTools.apply(this.session, changes);
    await this.deps.store.saveSessionTools(this.sessionId, this.session.active_tools, this.deps.sessionTools.state(this.session));
  }
}
