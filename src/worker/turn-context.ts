import { randomUUID } from 'node:crypto';
import { UniqueConstraintError } from 'sequelize';
import type { AgentEvent } from '../core/events';
import type { LoopPorts } from '../agent/model-loop';
import type { ToolCall } from '../agent/provider';
import type { ConfirmAction } from '../agent/tool-box';
import type { ToolOutcome } from '../agent/tool-executor';
import type { Models, SessionRow } from '../db/models';
import type { SessionTools } from '../sessions/session-tools';

export interface ConfirmationWaiters {
  /** Registers a waiter for `confirmationId`; the worker resolves it when tool_confirm arrives. */
  wait(confirmationId: string): { answer: Promise<ConfirmAction>; release(): void };
}

/**
 * The database-backed ports of one running turn: what the model loop and tool executor need from
 * the world (emitting, confirming, approvals, side-effect records, storing tool rounds).
 */
export class TurnContext implements LoopPorts {
  readonly sessionId: string;

  constructor(
    private readonly deps: {
      models: Models;
      sessionTools: SessionTools;
      waiters: ConfirmationWaiters;
      confirmationTimeoutMs: number;
      emitEvent: (event: AgentEvent) => Promise<void>;
    },
    private readonly session: SessionRow,
    readonly turnId: string,
    readonly signal: AbortSignal,
    private readonly onCancel: () => void,
  ) {
    this.sessionId = session.id;
  }

  emit(event: AgentEvent): Promise<void> {
    return this.deps.emitEvent(event);
  }

  async confirm(request: { tool: string; parameters: Record<string, unknown>; message: string }): Promise<ConfirmAction> {
    const confirmationId = randomUUID();
    const { answer, release } = this.deps.waiters.wait(confirmationId);
    const { models } = this.deps;
    // Kept with the session, so a socket that connects meanwhile is asked again.
    await models.Session.update(
      { pending_confirmation: { confirmation_id: confirmationId, tool: request.tool, parameters: request.parameters, message: request.message, turn_id: this.turnId } },
      { where: { id: this.sessionId } },
    );
    let timer: NodeJS.Timeout | undefined;
    try {
      await this.emit({ type: 'tool_confirm_request', payload: { confirmation_id: confirmationId, ...request } });
      const aborted = new Promise<never>((_, reject) => {
        const onAbort = () => reject(this.signal.reason);
        if (this.signal.aborted) onAbort();
        this.signal.addEventListener('abort', onAbort, { once: true });
      });
      const timedOut = new Promise<ConfirmAction>((resolve) => {
        timer = setTimeout(() => resolve('deny'), this.deps.confirmationTimeoutMs); // spec: a timeout counts as deny
      });
      return await Promise.race([answer, timedOut, aborted]);
    } finally {
      clearTimeout(timer);
      release();
      const current = await models.Session.findOne({ where: { id: this.sessionId }, attributes: ['ordinal', 'pending_confirmation'] });
      if (current?.pending_confirmation?.confirmation_id === confirmationId) {
        await models.Session.update({ pending_confirmation: null }, { where: { id: this.sessionId } });
      }
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

  async claimSideEffect(callId: string, tool: string): Promise<boolean> {
    try {
      await this.deps.models.ToolRun.create({ tool_call_id: callId, session_id: this.sessionId, turn_id: this.turnId, name: tool, status: 'running', created_at: new Date() });
      return true;
    } catch (error) {
      if (error instanceof UniqueConstraintError) return false;
      throw error;
    }
  }

  async finishSideEffect(callId: string, ok: boolean): Promise<void> {
    await this.deps.models.ToolRun.update({ status: ok ? 'done' : 'failed' }, { where: { turn_id: this.turnId, tool_call_id: callId } });
  }

  cancelTurn(): void {
    this.onCancel();
  }

  /** Stores a round that called tools and its results, tagged with the turn: a redelivered turn resumes from them. */
  async recordToolRound(content: string, calls: ToolCall[], outcomes: ToolOutcome[]): Promise<void> {
    const { models } = this.deps;
    const base = { session_id: this.sessionId, workflow_id: null, mode: null, reply_to: null, turn_id: this.turnId };
    await models.Message.create({ ...base, id: randomUUID(), role: 'assistant', content, tool_calls: calls, metadata: {} });
    for (const outcome of outcomes) {
      await models.Message.create({
        ...base,
        id: randomUUID(),
        role: 'tool',
        content: outcome.content,
        tool_calls: [],
        metadata: { tool_call_id: outcome.call.id, name: outcome.call.name, error: outcome.error },
      });
    }
  }

  private async changeTools(changes: Parameters<SessionTools['apply']>[1]): Promise<void> {
    this.deps.sessionTools.apply(this.session, changes);
    await this.deps.models.Session.update({ tool_state: this.session.tool_state, active_tools: this.session.active_tools }, { where: { id: this.sessionId } });
  }
}
