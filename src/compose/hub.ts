import type { LlmProvider } from '../agent/provider';
import { SwitchboardHub } from '../sessions/hub';
import { sessionMidTurnPolicy } from '../sessions/mid-turn-policy';
import { SessionAccess } from '../sessions/session-access';
import { SessionService } from '../sessions/session-service';
import { WorkflowService } from '../workflows/workflow-service';
import type { Core } from './service-types';

/** The session-facing services of an API process: sessions, workflows, and the hub port channels use. */
export interface HubParts {
  sessions: SessionService;
  workflows: WorkflowService;
  hub: SwitchboardHub;
}

/** Builds them on the running router and the turn services of `core`. */
export async function composeHub(core: Core, provider: LlmProvider): Promise<HubParts> {
  const { config, models, drivers, lifecycle, routing } = core;
  const access = new SessionAccess(core.store);
  await access.start(drivers.control);
  lifecycle.onStop({ name: 'session access', stop: async () => access.stop() });
  const sessions = new SessionService({
    models,
    store: core.store,
    registry: drivers.registry,
    access,
    control: drivers.control,
    defaultTools: config.agent.default_tools,
    workflowById: (id) => routing.workflowById(id),
    workflowByName: (name) => routing.workflowByName(name),
    modelAliases: [provider.model],
  });
  const workflows = new WorkflowService(models, {
    tools: core.tools,
    collections: core.knowledge,
    promptBudgetTokens: config.llm.context_window - config.agent.working_memory_tokens,
    onChange: () => drivers.control.publish({ kind: 'workflows_changed' }),
    channels: core.channels,
  });
  const hub = new SwitchboardHub({
    models,
    store: core.store,
    registry: drivers.registry,
    defaultTools: config.agent.default_tools,
    channels: core.channels,
    turns: core.turns,
    midTurnPolicy: sessionMidTurnPolicy({
      registry: drivers.registry,
      store: core.store,
      workflowById: (id) => routing.workflowById(id),
      channelDefault: core.midTurnDefault,
    }),
    events: drivers.events,
    control: drivers.control,
    approvals: core.approvals,
    metrics: core.metrics,
    tracing: core.tracing,
    arrivals: core.arrivals,
  });
  return { sessions, workflows, hub };
}
