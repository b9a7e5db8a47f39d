import type { AgentEvent } from '../core/events';
import { describeCall, sortParameters } from './confirmation';
import type { ToolCall } from './provider';
import type { ConfirmAction, ToolBox } from './tool-box';

/** Longest tool result (characters of JSON) given back to the model; the rest is cut with a note. */
export const TOOL_RESULT_LIMIT = 16_000;

/** What the executor needs from the turn around it (the worker implements it with the database). */
export interface ToolTurnPorts {
  sessionId: string;
  signal: AbortSignal;
  emit(event: AgentEvent): Promise<void>;
  /** Asks the human (tool_confirm_request) and waits; resolves `deny` on timeout. */
  confirm(request: { tool: string; parameters: Record<string, unknown>; message: string; callId?: string }): Promise<ConfirmAction>;
  /** Why the last `deny` of this tool's approval was given (a timeout, an approver), or null: the requester's own deny. */
  denial?(tool: string): string | null;
  /** Whether an approval policy governs the tool (issue 30): then it is asked of approvers even if it needs no confirmation. */
  underPolicy?(tool: string): boolean;
  /** Session-wide approvals and disables (allow_all, disable), persisted with the session. */
  isApproved(tool: string): boolean;
  isDisabled(tool: string): boolean;
  approve(tool: string): Promise<void>;
  disable(tool: string): Promise<void>;
  /** Records a side-effecting call before it runs; false if this call id was already started once. */
  claimSideEffect(callId: string, tool: string): Promise<boolean>;
  finishSideEffect(callId: string, ok: boolean): Promise<void>;
  /** The human chose `cancel`: the whole turn stops. */
  cancelTurn(): void;
  /**
   * Runs one tool call (its confirmation, if any, included) where the turn can watch it: metrics
   * and a trace span per call. Absent: the call just runs.
   */
  observeTool?(call: ToolCall, run: () => Promise<{ error: string | null }>): Promise<{ error: string | null }>;
  /** A call that needs confirmation runs without asking, because the session allowed the tool earlier (`allow_all`). */
  autoApproved?(tool: string, parameters: Record<string, unknown>): void;
}

/** Asks one confirmation in turn; `settled` answers instead when an earlier answer already decided. */
type Ask = (request: Parameters<ToolTurnPorts['confirm']>[0], settled: () => ConfirmAction | null) => Promise<ConfirmAction>;

/** Per-turn state: `forbid_all` blocks every later call of the turn. */
export interface ToolTurnState {
  forbidden: boolean;
  calls: number;
}

/**
 * The `error` of a call that did not end because its turn was cancelled (at its confirmation, or
 * while it ran): on its closing `tool_end` and in the history (decisions.md §8).
 */
export const CANCELLED_CALL_ERROR = 'CANCELLED';

/** The outcome of a call the cancel of its turn interrupted (or the human cancelled at its confirmation). */
const CANCELLED_CALL = { content: 'Error: The user cancelled the turn; this call did not run to its end.', error: CANCELLED_CALL_ERROR };

export interface ToolOutcome {
  call: ToolCall;
  /** The arguments as validated (empty when they were not valid JSON of the tool's schema). */
  input: Record<string, unknown>;
  /** The text given to the model as the tool's result. */
  content: string;
  error: string | null;
  /** From tool_start to tool_end, as the `tool_end` frame says. */
  durationMs: number;
}

/**
 * Runs the tool calls of one model round: each gets `tool_start`, then (for safety-wrapped tools) a
 * confirmation, then its run, then `tool_end`. Calls run in parallel; confirmations are asked one
 * at a time. Every refusal or failure becomes a result the model sees, never a crash.
 */
export async function executeToolCalls(calls: ToolCall[], tools: ToolBox, ports: ToolTurnPorts, state: ToolTurnState): Promise<ToolOutcome[]> {
  let confirmations: Promise<unknown> = Promise.resolve();
  // A call waits for the confirmations before it; an answer among them (forbid_all, disable,
  // allow_all) may have settled it by then, and then the user is not asked again.
  const askInTurn: Ask = (request, settled) => {
    const asked = confirmations.then(() => settled() ?? ports.confirm(request));
    confirmations = asked.catch(() => undefined);
    return asked;
  };
  const validated = calls.map((call) => ({ call, validation: tools.validate(call.name, call.arguments) }));
  for (const { call, validation } of validated) {
    await ports.emit({ type: 'tool_start', payload: { tool_name: call.name, tool_call_id: call.id, input: validation.ok ? validation.input : {} } });
  }
  state.calls += calls.length;
  return Promise.all(
    validated.map(async ({ call, validation }) => {
      const started = performance.now();
      const run = () => runOne(call, validation, tools, ports, state, askInTurn);
      const running = ports.observeTool ? (ports.observeTool(call, run) as ReturnType<typeof run>) : run();
      const result = await unlessCancelled(running, ports.signal);
      const durationMs = Math.round(performance.now() - started);
      await ports.emit({ type: 'tool_end', payload: { tool_name: call.name, tool_call_id: call.id, duration_ms: durationMs, error: result.error } });
      return { ...result, call, input: validation.ok ? validation.input : {}, durationMs };
    }),
  );
}

async function runOne(
  call: ToolCall,
  validation: ReturnType<ToolBox['validate']>,
  tools: ToolBox,
  ports: ToolTurnPorts,
  state: ToolTurnState,
  ask: Ask,
): Promise<Pick<ToolOutcome, 'content' | 'error'>> {
  const refuse = (error: string) => ({ content: `Error: ${error}`, error });
  const tool = tools.get(call.name);
  // Never run: a tool this round did not offer (its box does not hold it), whatever the model asks.
  if (!tool) return refuse(tools.refusal?.(call.name) ?? `There is no tool "${call.name}" in this session.`);
  if (!validation.ok) return refuse(`Invalid arguments: ${validation.error}`);
  if (ports.isDisabled(tool.name)) return refuse(`The user disabled "${tool.name}" for this session.`);
  if (state.forbidden) return refuse('The user blocked all further tool use in this turn.');
  const availability = tool.availability();
  if (!availability.ok) return refuse(`"${tool.name}" is not available: ${availability.reason}`);

  if (asksFirst(tool, ports) && ports.isApproved(tool.name)) ports.autoApproved?.(tool.name, validation.input);
  else if (asksFirst(tool, ports)) {
    const settled = (): ConfirmAction | null =>
      state.forbidden ? 'forbid_all' : ports.isDisabled(tool.name) ? 'disable' : ports.isApproved(tool.name) ? 'allow' : null;
    const action = await ask(question(tool.name, validation.input, call.id), settled);
    switch (action) {
      case 'allow':
        break;
      case 'allow_all':
        await ports.approve(tool.name);
        break;
      case 'deny':
        return refuse(ports.denial?.(tool.name) ?? 'The user denied this call. You may explain why it is needed and ask again, or do without it.');
      case 'disable':
        await ports.disable(tool.name);
        return refuse(`The user disabled "${tool.name}" for this session.`);
      case 'forbid_all':
        state.forbidden = true;
        return refuse('The user blocked all further tool use in this turn.');
      case 'cancel':
        ports.cancelTurn();
        return CANCELLED_CALL;
    }
  }
  // A turn stopped while this call waited (for its confirmation, or the ones before it) starts nothing.
  if (ports.signal.aborted) return CANCELLED_CALL;
  if (tool.sideEffects && !(await ports.claimSideEffect(call.id, tool.name))) {
    // Started once already (the turn is being redelivered after a crash): never run it twice.
    return refuse('This call was already started before an interruption; it was not run again, and its outcome is unknown.');
  }
  try {
    const result = await tool.run(validation.input, { sessionId: ports.sessionId, signal: ports.signal });
    if (tool.sideEffects) await ports.finishSideEffect(call.id, true);
    const text = JSON.stringify(result ?? null);
    return { content: text.length > TOOL_RESULT_LIMIT ? `${text.slice(0, TOOL_RESULT_LIMIT)}… [cut at ${TOOL_RESULT_LIMIT} characters]` : text, error: null };
  } catch (error) {
    if (tool.sideEffects) await ports.finishSideEffect(call.id, false);
    if (ports.signal.aborted) throw error;
    const message = error instanceof Error ? error.message : String(error);
    return refuse(message);
  }
}

/** The question a call asks (the call's id names its approval, when a policy governs the tool). */
function question(tool: string, input: Record<string, unknown>, callId: string) {
  return { tool, parameters: sortParameters(input), message: describeCall(tool, input), callId };
}

/** Whether a call asks someone before it runs: its tool needs confirmation, or an approval policy governs it (issue 30). */
function asksFirst(tool: { name: string; requiresConfirmation: boolean }, ports: ToolTurnPorts): boolean {
  return tool.requiresConfirmation || ports.underPolicy?.(tool.name) === true;
}

/**
 * A call's outcome, or CANCELLED_CALL once the turn is stopped (cancel or shutdown): a stopped turn
 * does not wait for a tool that ignores its signal, and every call of the round still gets an outcome
 * (a cancelled round is stored with them). Other failures (the database, the registry) are thrown.
 */
async function unlessCancelled(running: Promise<Pick<ToolOutcome, 'content' | 'error'>>, signal: AbortSignal): Promise<Pick<ToolOutcome, 'content' | 'error'>> {
  let onAbort: (() => void) | undefined;
  const stopped = new Promise<typeof CANCELLED_CALL>((resolve) => {
    onAbort = () => resolve(CANCELLED_CALL);
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
  // What the call does after the turn stopped is no longer awaited: its failure is not unhandled.
  running.catch(() => undefined);
  try {
    return await Promise.race([running, stopped]);
  } catch (error) {
    if (signal.aborted) return CANCELLED_CALL;
    throw error;
  } finally {
    signal.removeEventListener('abort', onAbort!);
  }
}
