import type { ApprovalService } from '../approvals/approval-service';
import { storedPolicies } from '../approvals/stored-policies';
import { pinnedTools } from './pinned-tools';
import { fitEntries, systemWithSummary, type MemoryEntry } from '../agent/memory';
import { runModelLoop, type TurnState } from '../agent/model-loop';
import { runDelegate, runThink, type ModeRequest } from '../agent/modes';
import type { LlmProvider } from '../agent/provider';
import { countTokens } from '../agent/tokens';
import { TurnStopped } from '../agent/turn-stopped';
import type { Config } from '../config';
import type { AuditSink } from '../core/audit';
import type { AgentState, TurnMode } from '../core/events';
import type { WorkflowRow } from '../db/models';
import type { MessageRecord, SessionRecord, TurnStore, UsageToday } from '../db/turn-store';
import type { Logger } from '../logs/logger';
import type { HubMetrics } from '../metrics/hub-metrics';
import type { RoutingService } from '../routing/routing-service';
import type { SessionTools } from '../sessions/session-tools';
import type { Tracing } from '../tracing/tracing';
import type { TurnEvents } from '../turns/turn-events';
import type { TurnLifecycle } from '../turns/turn-lifecycle';
import type { DailyBudgets } from '../usage/budgets';
import { conversationEntries, endedToolRounds, pendingToolRound, type TurnPlan } from './conversation';
import { TurnContext, type ConfirmationWaiters } from './turn-context';
import { compactMemory, promptBudget } from './turn-memory';
import type { TurnObserver } from './turn-observer';
import type { TurnResult } from './turn-reply';

/** Passages of the workflow's knowledge collections for a message, formatted for the system prompt. */
export interface TurnKnowledge {
  passagesFor(knowledgeBaseIds: readonly string[], query: string): Promise<string | null>;
}

export interface AgentTurnDeps {
  store: TurnStore;
  turns: TurnLifecycle;
  provider: LlmProvider;
  sessionTools: SessionTools;
  routing: RoutingService;
  logger: Logger;
  agent: Config['agent'];
  contextWindow: number;
  knowledge?: TurnKnowledge;
  budgets?: DailyBudgets | null;
  audit: AuditSink;
  metrics?: HubMetrics | null;
  tracing?: Tracing | null;
  waiters: ConfirmationWaiters;
  approvals?: ApprovalService | null;
}

/** One agent turn, as the worker's pipeline hands it over once the conversation is read and planned. */
export interface AgentTurn {
  session: SessionRecord;
  plan: TurnPlan;
  userMessage: MessageRecord;
  state: TurnState;
  events: TurnEvents;
  /** Aborted with TurnStopped when the turn is cancelled or the worker shuts down. */
  controller: AbortController;
  /** Aborted when a newer message steers: the turn ends at its next model or tool boundary. */
  steered: AbortSignal;
  observer: TurnObserver | null;
  /** Today's usage, read with the conversation when daily budgets are on. */
  usage: UsageToday | undefined;
}

type Routed = NonNullable<TurnResult['routing']>;

/** Routes the turn, builds its prompt, runs the model in the message's mode, and compacts memory when it outgrew the budget. */
export async function runAgentTurn(deps: AgentTurnDeps, turn: AgentTurn): Promise<TurnResult> {
  const { session, userMessage, controller } = turn;
  const ports = new TurnContext(
    { ...deps, confirmationTimeoutMs: deps.agent.confirmation_timeout_s * 1000 },
    turn.events,
    session,
    controller.signal,
    () => controller.abort(new TurnStopped('cancel')),
    turn.steered,
  );
  const routing = await routeTurn(deps, turn);
  ports.workflow = routing.workflow?.name ?? null;
  ports.requester = userMessage.sender ?? session.owner_id;
  await ports.approvals.load(storedPolicies(routing.workflow?.approvals ?? null), session.id);
  const { request, entries } = await prepareRequest(deps, turn, routing.workflow);
  const setState = (next: AgentState) => ports.emit({ type: 'agent_state', payload: { state: next } });
  const text = await runMode((userMessage.mode ?? 'normal') as TurnMode, request, ports, turn.state, setState);
  controller.signal.throwIfAborted();
  const tokens = countTokens(text);
  const compaction =
    sessionConfig(session).contextCompression === false
      ? null
      : await compactMemory(deps, {
          session,
          entries,
          userMessage,
          answer: text,
          tokens,
          waitingOrdinals: turn.plan.waitingOrdinals,
          signal: controller.signal,
        });
  return { text, tokens, command: false, routing, compaction };
}

/**
 * Picks the turn's workflow (metadata, contact, triggers, session, default) in its own span; over a
 * daily budget the turn is refused here, before the model is called (BUDGET_EXCEEDED ends it).
 */
async function routeTurn(deps: AgentTurnDeps, turn: AgentTurn): Promise<Routed> {
  const { session, userMessage } = turn;
  const requested = typeof userMessage.metadata?.workflow === 'string' ? userMessage.metadata.workflow : null;
  const route = () => deps.routing.route(session, userMessage.content, requested);
  const routing = deps.tracing
    ? await deps.tracing.inSpan('route', {}, async (span) => {
        const decided = await route();
        span.setAttributes({ 'switchboard.workflow': decided.workflow?.name ?? 'none', 'switchboard.routing_reason': decided.decision.reason });
        return decided;
      })
    : await route();
  const { workflow } = routing;
  turn.observer?.routed(workflow?.name ?? null);
  if (turn.usage && deps.budgets)
    await deps.budgets.check(userMessage.sender ?? session.owner_id, workflow ? { id: workflow.id, name: workflow.name } : null, turn.usage);
  // Messages sent meanwhile follow this workflow's mid-turn policy: the registry says which it is.
  if (routing.decision.workflowId !== session.active_workflow_id) {
    await deps.turns.routed({ sessionId: session.id, turnId: userMessage.id }, routing.decision.workflowId);
  }
  deps.logger.debug({ session_id: session.id, workflow: workflow?.name ?? null, reason: routing.decision.reason, score: routing.decision.score }, 'routed');
  return routing;
}

/**
 * The model request: the system prompt (the session's own, else the workflow's, else the default,
 * with the workflow's knowledge passages and the rolling summary), the conversation that fits, the
 * session's tools, the round limit and a tool round to resume (a redelivered turn's).
 */
async function prepareRequest(
  deps: AgentTurnDeps,
  turn: AgentTurn,
  workflow: WorkflowRow | null,
): Promise<{ request: ModeRequest & { inputTokens: number }; entries: MemoryEntry[] }> {
  const { session, plan, userMessage } = turn;
  // A tool round that started before a crash and never ended: its calls run first, as they were.
  const pending = pendingToolRound(plan.rows, userMessage.id);
  const entries = conversationEntries(pending ? plan.rows.filter((row) => row !== pending.row) : plan.rows);
  const passages =
    workflow && workflow.knowledge_base_ids.length > 0 && deps.knowledge
      ? await deps.knowledge.passagesFor(workflow.knowledge_base_ids, userMessage.content)
      : null;
  const config = sessionConfig(session);
  const prompt = [config.systemPrompt ?? (workflow?.system_prompt || deps.agent.system_prompt), passages].filter(Boolean).join('\n\n');
  const system = systemWithSummary(prompt, session.memory_summary);
  const { messages, tokens: inputTokens } = fitEntries(system, entries, promptBudget(deps.contextWindow, deps.agent));
  const pinned = pinnedTools(session, workflow, deps.routing.channels);
  await deps.sessionTools.prepare(pinned);
  const tools = deps.sessionTools.toolBox(session, pinned);
  const resume = pending ? { id: pending.row.id, content: pending.row.content, calls: pending.calls } : null;
  // A redelivered turn's rounds stored before count against its limit (the pending one counts when resumed).
  turn.state.rounds = endedToolRounds(plan.rows, userMessage.id, pending);
  return { request: { provider: deps.provider, messages, tools, maxRounds: config.maxSteps ?? deps.agent.max_tool_rounds, inputTokens, resume }, entries };
}

/** The turn's mode: `normal` streams one model loop; `think` and `delegate` take their steps first. */
function runMode(
  mode: TurnMode,
  request: ModeRequest & { inputTokens: number },
  ports: TurnContext,
  state: TurnState,
  setState: (state: AgentState) => Promise<void>,
): Promise<string> {
  switch (mode) {
    case 'think':
      return runThink(request, ports, state, setState);
    case 'delegate':
      return runDelegate(request, ports, state, setState);
    case 'normal':
      return runModelLoop({ ...request, stream: true }, ports, state);
    default:
      return unknownMode(mode);
  }
}

function unknownMode(mode: never): never {
  throw new Error(`unknown turn mode ${String(mode)}`);
}

/** The keys of a session's `config` the agent honours (checked when the session was written). */
function sessionConfig(session: SessionRecord): { systemPrompt?: string; maxSteps?: number; contextCompression?: boolean } {
  const config = session.config ?? {};
  return {
    systemPrompt: typeof config.system_prompt === 'string' ? config.system_prompt : undefined,
    maxSteps: typeof config.max_steps === 'number' ? config.max_steps : undefined,
    contextCompression: typeof config.context_compression === 'boolean' ? config.context_compression : undefined,
  };
}
