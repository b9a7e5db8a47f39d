import { z } from 'zod';
import type { Hub } from '../../core/hub';
import type { SessionService } from '../../sessions/session-service';
import { Reply, type ApiRouter } from '../endpoint';
import { listPage } from '../schemas/envelope';
import { clearMessagesBody, createSessionBody, listQuery, messageSchema, sessionIdParams, sessionSchema, updateSessionBody } from '../schemas/sessions';
import { registerSessionTurnRoutes } from './session-turns';

export interface SessionRoutesDeps {
  sessions: SessionService;
  /** The one way in: REST messages are ingested like WebSocket and chat messages. */
  hub: Hub;
  /** How long `?sync=true` waits for the turn's end. */
  syncTimeoutMs: number;
}

const tags = ['sessions'];

/** Sessions and their history (decisions.md §3); their turns (messages, cancel, confirmations) in ./session-turns.ts. */
export function registerSessionRoutes(api: ApiRouter, deps: SessionRoutesDeps): void {
  const { sessions } = deps;

  api.add({
    method: 'post',
    path: '/sessions',
    summary: 'Create a session',
    tags,
    access: 'user',
    body: createSessionBody.optional(),
    response: { status: 201, description: 'The new session.', data: sessionSchema },
    handler: ({ principal, body }) => sessions.create(principal, body ?? {}),
  });

  api.add({
    method: 'get',
    path: '/sessions',
    summary: 'List your sessions (admins: all), newest first',
    tags,
    access: 'user',
    query: listQuery.extend({ include_archived: z.enum(['true', 'false']).default('false') }),
    response: { status: 200, description: 'A page of sessions.', data: listPage(sessionSchema) },
    handler: ({ principal, query }) =>
      sessions.list(principal, { cursor: query.cursor, limit: query.limit, includeArchived: query.include_archived === 'true' }),
  });

  api.add({
    method: 'get',
    path: '/sessions/{id}',
    summary: 'Get a session',
    tags,
    access: 'user',
    params: sessionIdParams,
    errors: ['SESSION_NOT_FOUND'],
    response: { status: 200, description: 'The session.', data: sessionSchema },
    handler: ({ principal, params }) => sessions.get(principal, params.id),
  });

  api.add({
    method: 'patch',
    path: '/sessions/{id}',
    summary: 'Rename a session or change its config',
    tags,
    access: 'user',
    params: sessionIdParams,
    body: updateSessionBody,
    errors: ['SESSION_NOT_FOUND'],
    response: { status: 200, description: 'The updated session.', data: sessionSchema },
    handler: ({ principal, params, body }) => sessions.update(principal, params.id, body),
  });

  api.add({
    method: 'delete',
    path: '/sessions/{id}',
    summary: 'Archive a session (restore it with POST /sessions/{id}/restore); `?permanent=true` deletes it for good',
    description: 'Archives by default. With `permanent=true` the session, its messages and its tool records are deleted and 204 is answered (owner or admin).',
    tags,
    access: 'user',
    params: sessionIdParams,
    query: z.object({ permanent: z.enum(['true', 'false']).default('false') }),
    errors: ['SESSION_NOT_FOUND', 'TURN_IN_PROGRESS'],
    response: { status: 200, description: 'The archived session (204 with no body when permanent).', data: sessionSchema },
    handler: async ({ principal, params, query }) => {
      if (query.permanent !== 'true') return sessions.archive(principal, params.id);
      await sessions.deletePermanently(principal, params.id);
      return new Reply(204, null);
    },
  });

  api.add({
    method: 'post',
    path: '/sessions/{id}/restore',
    summary: 'Restore an archived session',
    tags,
    access: 'user',
    params: sessionIdParams,
    errors: ['SESSION_NOT_FOUND'],
    response: { status: 200, description: 'The restored session.', data: sessionSchema },
    handler: ({ principal, params }) => sessions.restore(principal, params.id),
  });

  api.add({
    method: 'get',
    path: '/sessions/{id}/messages',
    summary: 'Message history, oldest first; next_cursor leads to newer messages',
    tags,
    access: 'user',
    params: sessionIdParams,
    query: listQuery,
    errors: ['SESSION_NOT_FOUND'],
    response: { status: 200, description: 'A page of messages.', data: listPage(messageSchema) },
    handler: ({ principal, params, query }) => sessions.history(principal, params.id, query),
  });

  api.add({
    method: 'delete',
    path: '/sessions/{id}/messages',
    summary: 'Clear the history, optionally keeping the newest `keep_last` messages',
    tags,
    access: 'user',
    params: sessionIdParams,
    body: clearMessagesBody,
    errors: ['SESSION_NOT_FOUND', 'TURN_IN_PROGRESS'],
    response: { status: 200, description: 'How many were deleted and kept.', data: z.object({ deleted: z.number().int(), kept: z.number().int() }) },
    handler: ({ principal, params, body }) => sessions.clear(principal, params.id, body?.keep_last ?? 0),
  });

  registerSessionTurnRoutes(api, deps);
}
