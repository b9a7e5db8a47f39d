import { randomUUID } from 'node:crypto';
import type { AgentEvent } from '../core/events';
import type { TurnRegistry } from '../core/turns';
import type { LoopPorts } from '../agent/model-loop';
import type { ToolCall } from '../agent/provider';
import type { ConfirmAction } from '../agent/tool-box';
import type { ToolOutcome } from '../agent/tool-executor';
import type { SessionRecord, TurnStore } from '../db/turn-store';
import type { SessionTools } from '../sessions/session-tools';
import { toolRoundMessages } from './conversation';
import type { TurnEvents } from './turn-events';

export interface ConfirmationWaiters {
  /** Registers a waiter for `confirmationId`; the worker resolves it when tool_confirm arrives. */
  wait(confirmationId: string): { answer: Promise<ConfirmAction>; release(): void };
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

  constructor(
    private readonly deps: {
      store: TurnStore;
      registry: TurnRegistry;
      sessionTools: SessionTools;
      waiters: ConfirmationWaiters;
      confirmationTimeoutMs: number;
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
  }

  emit(event: AgentEvent): Promise<void> {
    if (this.signal.aborted) return Promise.resolve(); // once stopped, the cancel events are the last ones
    return this.events.send(event);
  }

  async confirm(request: { tool: string; parameters: Record<string, unknown>; message: string }): Promise<ConfirmAction> {
    const confirmationId = randomUUID();
    const { answer, release } = this.deps.waiters.wait(confirmationId);
    const pending = { confirmation_id: confirmationId, ...request, workflow: this.workflow };
    // Kept with the running turn, so a socket that connects meanwhile is asked again.
    await this.deps.registry.update(this.sessionId, this.turnId, { pending });
    let timer: NodeJS.Timeout | undefined;
    try {
      await this.emit({ type: 'tool_confirm_request', payload: pending });
      await this.events.flush();
      const aborted = new Promise<never>((_, reject) => {
        const onAbort = () => reject(this.signal.reason);
        if (this.signal.aborted) onAbort();
        this.signal.addEventListener('abort', onAbort, { once: true });
      });
      const timedOut = new Promise<ConfirmAction>((resolve) => {
        timer = setTimeout(() => resolve('deny'), this.deps.confirmationTimeoutMs); // spec: a timeout counts as deny
        // The user moved on (a steering message): the tool is not run, as when denied.
        const steered = this.steered;
        if (steered?.aborted) resolve('deny');
        steered?.addEventListener('abort', () => resolve('deny'), { once: true });
      });
      return await Promise.race([answer, timedOut, aborted]);
    } finally {
      clearTimeout(timer);
      release();
      // Confirmations of a turn are asked one at a time, so the pending one is this one.
      await this.deps.registry.update(this.sessionId, this.turnId, { pending: null });
    }
  }

  isApproved(tool: string): boolean {
    return this.deps.sessionTools.state(this.session).approved.includes(tool);
  }

  isDisabled(tool: string): boolean {
    return this.deps.sessionTools.state(this.session).disabled.includes(tool);
  }

  approve(tool: string): Promise<void> {
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

  recordToolRound(content: string, calls: ToolCall[], outcomes: ToolOutcome[]): Promise<void> {
    return this.deps.store.insertMessages(toolRoundMessages({ session_id: this.sessionId, turn_id: this.turnId }, content, calls, outcomes, randomUUID));
  }

  private async changeTools(changes: Parameters<SessionTools['apply']>[1]): Promise<void> {
    this.deps.sessionTools.apply(this.session, changes);
    await this.deps.store.saveSessionTools(this.sessionId, this.session.active_tools, this.deps.sessionTools.state(this.session));
  }
}
