import { runCommand, type Command } from '../agent/commands';
import type { LlmProvider } from '../agent/provider';
import { countTokens } from '../agent/tokens';
import type { AgentEvent } from '../core/events';
import type { MessageRecord, SessionRecord, TurnStore } from '../db/turn-store';
import type { RoutingService } from '../routing/routing-service';
import type { SessionTools } from '../sessions/session-tools';
import { isAnonymousChannel } from '../core/channel';
import { pinnedTools } from './pinned-tools';
import type { TurnResult } from './turn-reply';

export interface CommandTurnDeps {
  store: TurnStore;
  provider: LlmProvider;
  sessionTools: SessionTools;
  routing: RoutingService;
}

/** `/info`, `/tools`, `/tools load`, `/help`: answered by the hub, not the model. */
export async function runCommandTurn(
  deps: CommandTurnDeps,
  command: Command,
  session: SessionRecord,
  userMessage: MessageRecord,
  emit: (event: AgentEvent) => Promise<void>,
): Promise<TurnResult> {
  const { sessionTools, provider } = deps;
  const workflow = await deps.routing.workflowById(session.active_workflow_id);
  const pinned = pinnedTools(session, workflow, deps.routing.channels);
  const result = await runCommand(command, {
    visitor: isAnonymousChannel(session.channel, deps.routing.channels),
    workflow: workflow?.name ?? null,
    provider: provider.name,
    model: provider.model,
    mode: userMessage.mode ?? 'normal',
    memoryMode: session.memory_mode,
    tools: sessionTools.views(session, pinned, workflow?.name).map((view) => ({
      name: view.name,
      status: view.status,
      requiresConfirmation: view.requires_confirmation,
      note: view.reason ?? undefined,
      ...(view.server ? { server: view.server } : {}),
    })),
    loadTool: (name) => loadTool(deps, session, workflow?.name ?? null, name),
  });
  if (result.expansionFailed) await emit({ type: 'error', payload: { code: 'TOOL_EXPANSION_FAILED', message: result.expansionFailed } });
  return { text: result.text, tokens: countTokens(result.text), command: true, routing: null, compaction: null };
}

/** A command's answer streamed like a model's, so every channel renders it the same way. */
export function streamText(text: string, emit: (event: AgentEvent) => Promise<void>): void {
  for (const line of text.split(/(?<=\n)/)) void emit({ type: 'token', payload: { text: line, final: false } });
}

/** `/tools load <name>`: refused while a workflow pins the tool list (spec rule 2), else loaded and saved. */
async function loadTool(deps: CommandTurnDeps, session: SessionRecord, workflow: string | null, name: string) {
  if (workflow) {
    // Spec rule 2: a workflow's tools are pinned; not a failure to load, a rule.
    return { ok: false as const, reason: `the workflow "${workflow}" pins its tool list; add "${name}" to its tool_list instead.`, expansionFailed: false };
  }
  try {
    deps.sessionTools.apply(session, { load: [name] });
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return { ok: false as const, reason, expansionFailed: true };
  }
  await deps.store.saveSessionTools(session.id, session.active_tools, deps.sessionTools.state(session));
  return { ok: true as const };
}
