import { z } from 'zod';
import type { SessionService } from '../../sessions/session-service';
import { messageView } from '../../sessions/serialize';
import type { TurnService } from '../../sessions/turn-service';
import { Reply, type ApiRouter } from '../endpoint';
import { listPage } from '../schemas/envelope';
import {
  clearMessagesBody,
  createSessionBody,
  donePayloadSchema,
  listQuery,
  messageSchema,
  postMessageBody,
  sessionIdParams,
  sessionSchema,
  updateSessionBody,
} from '../schemas/sessions';

export interface SessionRoutesDeps {
  sessions: SessionService;
  turns: TurnService;
  /** How long `?sync=true` waits for the turn's end. */
  syncTimeoutMs: number;
}

const tags = ['sessions'];

/** Sessions, their history, and the REST messages endpoint (decisions.md §3). */
export function registerSessionRoutes(api: ApiRouter, deps: SessionRoutesDeps): void {
  const { sessions, turns } = deps;

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
    summary: 'Archive a session (restore it with POST /sessions/{id}/restore)',
    tags,
    access: 'user',
    params: sessionIdParams,
    errors: ['SESSION_NOT_FOUND', 'TURN_IN_PROGRESS'],
    response: { status: 200, description: 'The archived session.', data: sessionSchema },
    handler: ({ principal, params }) => sessions.archive(principal, params.id),
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

  api.add({
    method: 'post',
    path: '/sessions/{id}/messages',
    summary: 'Send a user message (the turn streams on the session WebSocket)',
    description:
      'Answers 202 with the stored user message at once; the turn\'s events stream on `/ws/v1/sessions/{id}`. ' +
      'With `?sync=true` the request waits for the turn and answers 200 with the `done` payload.',
    tags,
    access: 'user',
    params: sessionIdParams,
    query: z.object({ sync: z.enum(['true', 'false']).default('false') }),
    body: postMessageBody,
    errors: ['SESSION_NOT_FOUND', 'TURN_IN_PROGRESS', 'CONFLICT', 'CANCELLED', 'SERVICE_UNAVAILABLE'],
    response: { status: 202, description: 'The stored user message (200 with the `done` payload when sync=true).', data: messageSchema.or(donePayloadSchema) },
    handler: async ({ principal, params, query, body }) => {
      const session = await sessions.visible(principal, params.id);
      const input = { session, text: (body.text ?? body.content)!, mode: body.mode, metadata: body.metadata };
      if (query.sync !== 'true') return messageView(await turns.accept(input));
      const done = await turns.waitForOutcome(session.id, deps.syncTimeoutMs, async (listen) => {
        listen();
        await turns.accept(input);
      });
      return new Reply(200, done);
    },
  });

  api.add({
    method: 'post',
    path: '/sessions/{id}/cancel',
    summary: 'Cancel the running turn (like the WebSocket `cancel` frame)',
    tags,
    access: 'user',
    params: sessionIdParams,
    errors: ['SESSION_NOT_FOUND', 'CONFLICT'],
    response: { status: 202, description: 'Cancellation requested; `agent_state idle` then `error CANCELLED` follow on the WebSocket.' },
    handler: async ({ principal, params }) => {
      await turns.cancel(await sessions.visible(principal, params.id));
      return { cancelling: true };
    },
  });
}
