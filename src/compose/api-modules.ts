// Before any route module builds its schemas (see src/api/schemas/openapi-zod.ts).
import '../api/schemas/openapi-zod';
import type { LlmProvider } from '../agent/provider';
import type { ApiModule } from '../api/app';
import type { ApiRouter } from '../api/endpoint';
import { apiKeyRoutes } from '../api/routes/api-keys';
import { approvalRoutes } from '../api/routes/approvals';
import { identityRoutes } from '../api/routes/identities';
import { auditRoutes } from '../api/routes/audit';
import { authRoutes } from '../api/routes/auth';
import { channelCheckRoutes } from '../api/routes/channel-checks';
import { channelRoutes } from '../api/routes/channels';
import { configRoutes } from '../api/routes/config';
import { knowledgeRoutes } from '../api/routes/knowledge';
import { mcpRoutes } from '../api/routes/mcp';
import { routingTestRoutes } from '../api/routes/routing-test';
import { samlRoutes } from '../api/routes/saml';
import { signInMethodRoutes } from '../api/routes/sign-in-methods';
import { registerSessionRoutes } from '../api/routes/sessions';
import { registerToolRoutes } from '../api/routes/tools';
import { usageRoutes } from '../api/routes/usage';
import { eventRoutes } from '../api/routes/events';
import type { Events } from '../triggers/events';
import { userRoutes } from '../api/routes/users';
import { registerWorkflowRoutes } from '../api/routes/workflows';
import { workflowTestRoutes } from '../api/routes/workflow-tests';
import type { AuditService } from '../audit/audit-service';
import type { ChannelStatusBoard } from '../server/channel-status';
import { SessionMemory } from '../sessions/session-memory';
import type { UsageService } from '../usage/usage-service';
import type { AuthParts } from './auth';
import type { BuiltChannel } from './channels';
import type { HubParts } from './hub';
import type { Core } from './service-types';
import { sandboxCaseRunner } from './workflow-tests';

/** The REST resources of an API process, each a module of `src/api/routes/` given its services. */
export function apiModules(
  core: Core,
  provider: LlmProvider,
  authParts: AuthParts,
  hubParts: HubParts,
  board: ChannelStatusBoard,
  records: { audit: AuditService; usage: UsageService; channels: readonly BuiltChannel[]; events: Events },
): ApiModule[] {
  const { config, models } = core;
  const { auth, saml } = authParts;
  const { sessions, hub, workflows } = hubParts;
  return [
    authRoutes({ ...auth, refreshCookie: authParts.refreshCookie }),
    apiKeyRoutes(auth.apiKeys, core.audit),
    userRoutes(auth.users, core.audit),
    identityRoutes(core.identities, auth.users, core.audit),
    auditRoutes(records.audit),
    approvalRoutes(core.approvals),
    usageRoutes(records.usage),
    eventRoutes(records.events),
    samlRoutes(saml, authParts.refreshCookie),
    signInMethodRoutes(saml !== null),
    knowledgeRoutes(core.knowledge),
    mcpRoutes(core.mcp, core.audit),
    channelRoutes(
      board,
      core.channels.map((channel) => channel.name),
    ),
    channelCheckRoutes({
      descriptors: core.channels,
      adapters: () => new Map(records.channels.map((built) => [built.adapter.name, built.adapter])),
      publicUrl: config.server.public_url ?? null,
    }),
    configRoutes({ provider: provider.name, model: provider.model, contextWindow: config.llm.context_window, channels: () => board.enabledNames() }),
    (api: ApiRouter) => registerSessionRoutes(api, { sessions, hub, syncTimeoutMs: config.api.sync_timeout_s * 1000 }),
    (api: ApiRouter) => registerWorkflowRoutes(api, workflows, core.audit),
    // The routing test box asks the process's running router, which follows every workflow change.
    routingTestRoutes(core.routing),
    // The editor's Tests panel: the cases run in a sandbox hub of their own.
    workflowTestRoutes(sandboxCaseRunner(models)),
    (api: ApiRouter) =>
      registerToolRoutes(api, {
        catalog: core.tools,
        sessionTools: core.sessionTools,
        sessions,
        memory: new SessionMemory(models, { systemPrompt: config.agent.system_prompt, contextWindow: config.llm.context_window }),
      }),
  ];
}
