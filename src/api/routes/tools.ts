import { z } from 'zod';
import type { ToolCatalog } from '../../agent/tool-box';
import { MEMORY_MODES, type SessionMemory } from '../../sessions/session-memory';
import type { SessionService } from '../../sessions/session-service';
import type { SessionTools } from '../../sessions/session-tools';
import type { ApiRouter } from '../endpoint';
import { sessionIdParams } from '../schemas/sessions';

export interface ToolRoutesDeps {
  catalog: ToolCatalog;
  sessionTools: SessionTools;
  memory: SessionMemory;
  sessions: SessionService;
}

const toolSchema = z
  .object({
    name: z.string(),
    description: z.string(),
    parameters: z.record(z.string(), z.unknown()).describe('JSON Schema of the input.'),
    requires_confirmation: z.boolean(),
    is_mcp: z.boolean().describe('True for a tool an MCP server provides (named `<server>__<tool>`).'),
    server: z.string().nullable().describe('The MCP server that provides it; null for a built-in tool.'),
    available: z.boolean(),
    reason: z.string().nullable().describe('Why an unavailable tool cannot be used (e.g. a missing API key).'),
  })
  .meta({ id: 'Tool' });

const sessionToolSchema = z
  .object({
    name: z.string(),
    description: z.string(),
    short_description: z.string().describe("The description's first sentence."),
    is_mcp: z.boolean().describe('True for a tool an MCP server provides (named `<server>__<tool>`).'),
    server: z.string().nullable().describe('The MCP server that provides it; null for a built-in tool.'),
    parameters: z.record(z.string(), z.unknown()),
    requires_confirmation: z.boolean(),
    status: z.enum(['active', 'available', 'disabled', 'unavailable']),
    auto_approved: z.boolean(),
    reason: z.string().nullable(),
  })
  .meta({ id: 'SessionTool' });

const names = z.array(z.string().min(1)).max(50).optional();
const toolChanges = z
  .strictObject({ load: names, unload: names, enable: names, disable: names, auto_approve: names, revoke_approval: names })
  .meta({ id: 'ToolChanges' });

const memorySchema = z
  .object({
    mode: z.enum(MEMORY_MODES),
    summary: z.string().nullable(),
    window_messages: z.number().int(),
    summarized_messages: z.number().int(),
    tokens_used: z.number().int(),
    context_window: z.number().int(),
    updated_at: z.iso.datetime().nullable(),
  })
  .meta({ id: 'Memory' });

/** Tools (catalogue and per session) and session memory (decisions.md §3). */
export function registerToolRoutes(api: ApiRouter, deps: ToolRoutesDeps): void {
  const { catalog, sessionTools, memory, sessions } = deps;

  api.add({
    method: 'get',
    path: '/tools',
    summary: 'Every tool of the hub, with its JSON-schema parameters (a plain array)',
    tags: ['tools'],
    access: 'user',
    response: { status: 200, description: 'The catalogue.', data: z.array(toolSchema) },
    handler: () =>
      catalog.list().map((tool) => {
        const availability = tool.availability();
        return {
          name: tool.name,
          description: tool.description,
          parameters: tool.parameters,
          requires_confirmation: tool.requiresConfirmation,
          is_mcp: tool.source !== undefined,
          server: tool.source?.server ?? null,
          available: availability.ok,
          reason: availability.ok ? null : availability.reason,
        };
      }),
  });

  api.add({
    method: 'get',
    path: '/sessions/{id}/tools',
    summary: 'Each tool with its status in the session (a plain array)',
    tags: ['tools'],
    access: 'user',
    params: sessionIdParams,
    errors: ['SESSION_NOT_FOUND'],
    response: { status: 200, description: 'Tools and their status.', data: z.array(sessionToolSchema) },
    handler: async ({ principal, params }) => {
      const session = await sessions.visible(principal, params.id);
      const pinning = await sessions.pinningWorkflow(session);
      return sessionTools.views(session, pinning?.tools, pinning?.name);
    },
  });

  api.add({
    method: 'patch',
    path: '/sessions/{id}/tools',
    summary: 'Load, unload, enable, disable, auto-approve or revoke approval of tools in the session',
    tags: ['tools'],
    access: 'user',
    params: sessionIdParams,
    body: toolChanges,
    errors: ['SESSION_NOT_FOUND', 'TOOL_EXPANSION_FAILED', 'CONFLICT'],
    response: { status: 200, description: 'Tools and their status after the change.', data: z.array(sessionToolSchema) },
    handler: async ({ principal, params, body }) => {
      const session = await sessions.visible(principal, params.id);
      const pinning = await sessions.pinningWorkflow(session);
      sessionTools.apply(session, body, pinning?.name);
      await session.save();
      return sessionTools.views(session, pinning?.tools, pinning?.name);
    },
  });

  api.add({
    method: 'get',
    path: '/sessions/{id}/memory',
    summary: "The session's memory: mode, rolling summary, what the context holds",
    tags: ['memory'],
    access: 'user',
    params: sessionIdParams,
    errors: ['SESSION_NOT_FOUND'],
    response: { status: 200, description: 'The memory.', data: memorySchema },
    handler: async ({ principal, params }) => memory.view(await sessions.visible(principal, params.id)),
  });

  api.add({
    method: 'patch',
    path: '/sessions/{id}/memory',
    summary: 'Change the memory mode (conversation, code, reasoning)',
    tags: ['memory'],
    access: 'user',
    params: sessionIdParams,
    body: z.strictObject({ mode: z.enum(MEMORY_MODES) }),
    errors: ['SESSION_NOT_FOUND'],
    response: { status: 200, description: 'The memory.', data: memorySchema },
    handler: async ({ principal, params, body }) => memory.setMode(await sessions.visible(principal, params.id), body.mode),
  });

  api.add({
    method: 'delete',
    path: '/sessions/{id}/memory',
    summary: 'Clear the memory: the agent forgets the conversation so far (the history stays)',
    tags: ['memory'],
    access: 'user',
    params: sessionIdParams,
    errors: ['SESSION_NOT_FOUND', 'TURN_IN_PROGRESS'],
    response: { status: 200, description: 'The cleared memory.', data: memorySchema },
    handler: async ({ principal, params }) => {
      const session = await sessions.visible(principal, params.id);
      await sessions.refuseWhileRunning(session.id, 'wait for `done` first');
      return memory.clear(session);
    },
  });
}
