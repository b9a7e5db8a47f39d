import { createHash, randomUUID } from 'node:crypto';
import { z } from 'zod';
import { AppError } from '../../core/errors';
import { WEB_CHANNEL } from '../../core/channel';
import { followTurn, type TurnOutcome } from '../../core/follow-turn';
import type { Ingested } from '../../core/hub';
import type { InboundMessage } from '../../core/inbound';
import { messageView } from '../../sessions/serialize';
import { Reply, type ApiRouter } from '../endpoint';
import {
  confirmationParams,
  confirmedSchema,
  confirmToolBody,
  donePayloadSchema,
  messageSchema,
  postMessageBody,
  postMessageHeaders,
  sessionIdParams,
} from '../schemas/sessions';
import type { SessionRoutesDeps } from './sessions';

const tags = ['sessions'];

/** A session's turns over REST: send a message (the REST twin of `user_message`), cancel, answer a confirmation. */
export function registerSessionTurnRoutes(api: ApiRouter, deps: SessionRoutesDeps): void {
  const { sessions, hub } = deps;

  api.add({
    method: 'post',
    path: '/sessions/{id}/messages',
    summary: 'Send a user message (the turn streams on the session WebSocket)',
    description:
      "Answers 202 with the stored user message at once; the turn's events stream on `/ws/v1/sessions/{id}`. " +
      'With `?sync=true` the request waits for the turn and answers 200 with the `done` payload.',
    tags,
    access: 'user',
    params: sessionIdParams,
    query: z.object({ sync: z.enum(['true', 'false']).default('false') }),
    body: postMessageBody,
    errors: ['SESSION_NOT_FOUND', 'TURN_IN_PROGRESS', 'CONFLICT', 'CANCELLED', 'SERVICE_UNAVAILABLE'],
    response: { status: 202, description: 'The stored user message (200 with the `done` payload when sync=true).', data: messageSchema.or(donePayloadSchema) },
    headers: postMessageHeaders,
    handler: async ({ principal, params, query, body, headers }) => {
      await sessions.access(principal, params.id);
      const key = headers['idempotency-key'] as string | undefined;
      const message: InboundMessage & { sessionId: string } = {
        channel: WEB_CHANNEL,
        sessionId: params.id,
        sender: { userId: principal.userId, displayName: principal.username },
        text: (body.text ?? body.content)!,
        mode: body.mode,
        metadata: body.metadata,
        ...(key === undefined ? {} : { externalId: idempotencyId(params.id, key) }),
      };
      if (query.sync !== 'true') {
        const ingested = await hub.ingest(message);
        return ingested.duplicate ? new Reply(202, await firstAnswer(deps, ingested)) : storedMessageView(message, ingested);
      }
      return new Reply(200, await ingestAndWait(deps, { ...message, turnId: randomUUID() }));
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
      await sessions.access(principal, params.id).catch((error: unknown) => {
        if (!(error instanceof AppError && error.code === 'CONFLICT')) throw error; // archived: nothing runs
      });
      await hub.cancelTurn(params.id);
      return { cancelling: true };
    },
  });

  api.add({
    method: 'post',
    path: '/sessions/{id}/confirmations/{confirmation_id}',
    summary: 'Answer a tool confirmation (like the WebSocket `tool_confirm` frame)',
    description:
      "For clients without a socket (e.g. a `?sync=true` request waiting on a confirmation): the session record's " +
      '`pending_confirmation` names what the turn waits for. Same rules as `tool_confirm`: only the confirmation the ' +
      'running turn waits for can be answered, once.',
    tags,
    access: 'user',
    params: confirmationParams,
    body: confirmToolBody,
    errors: ['SESSION_NOT_FOUND', 'CONFIRMATION_NOT_FOUND', 'FORBIDDEN'],
    response: { status: 202, description: 'The answer was handed to the turn; its frames follow on the WebSocket.', data: confirmedSchema },
    handler: async ({ principal, params, body }) => {
      await sessions.access(principal, params.id);
      try {
        await hub.confirmTool(params.id, params.confirmation_id, body.action, { kind: 'user', id: principal.userId, name: principal.username });
      } catch (error) {
        // The socket answers a stale id with an INVALID_MESSAGE frame; on REST it is a resource that is not there.
        if (error instanceof AppError && error.code === 'INVALID_MESSAGE') throw new AppError('CONFIRMATION_NOT_FOUND', error.message);
        throw error;
      }
      return new Reply(202, { confirmation_id: params.confirmation_id, action: body.action });
    },
  });
}

/**
 * What an `Idempotency-Key` names on the hub: the key hashed (any length, any bytes fit the event
 * id column) and scoped to the session, so two clients' keys never meet.
 */
function idempotencyId(sessionId: string, key: string): string {
  return `${sessionId}:${createHash('sha256').update(key).digest('base64url')}`;
}

/** A repeated `Idempotency-Key`: the message its first request stored (no second turn was started). */
async function firstAnswer(deps: SessionRoutesDeps, ingested: Ingested) {
  const stored = ingested.userMessageId ? await deps.sessions.message(ingested.sessionId, ingested.userMessageId) : null;
  if (!stored)
    throw new AppError('CONFLICT', 'A request with this Idempotency-Key is still being taken in; retry it in a moment.', { headers: { 'Retry-After': '1' } });
  return stored;
}

/** A web turn's ending as the sync answer: its `done` payload, or the documented error. */
function outcomeAnswer(outcome: TurnOutcome, turnId: string) {
  if (outcome.kind === 'done') return outcome.done;
  if (outcome.kind === 'cancelled') throw new AppError('CANCELLED', 'The turn was cancelled.');
  if (outcome.kind === 'error') throw new AppError(outcome.code, outcome.message);
  // The web channel never lets a message wait (TURN_IN_PROGRESS): none is merged or dropped; we stop only after this.
  throw new Error(`web turn ${turnId} ended as ${outcome.kind}`);
}

/** The 202 answer: the stored user message, as history shows it. */
function storedMessageView(message: InboundMessage, ingested: Ingested) {
  return messageView({
    id: ingested.userMessageId,
    session_id: ingested.sessionId,
    role: 'user',
    content: message.text,
    tool_calls: [],
    input_tokens: 0,
    output_tokens: 0,
    workflow_id: null,
    mode: message.mode,
    metadata: message.metadata,
    reply_to: null,
    turn_id: ingested.userMessageId,
    created_at: ingested.createdAt ?? new Date(),
  });
}

/**
 * `?sync=true`: follows the turn by its id from before it is ingested (so no frame is missed), then
 * answers its `done` payload, or its ending as the documented error (409 CANCELLED, the turn's own
 * error code, 503 when it outlasts the wait and goes on). A repeated `Idempotency-Key` follows the
 * first request's turn instead, from the frames the log keeps (it may still run); once the log no
 * longer keeps an ended turn (the replay buffer), its reply is in the history and 409 says so.
 */
async function ingestAndWait(deps: SessionRoutesDeps, message: InboundMessage & { sessionId: string; turnId: string }) {
  const { events } = deps.hub;
  let followed = await followTurn(events, message.sessionId, message.turnId);
  let timer: NodeJS.Timeout | undefined;
  try {
    const ingested = await deps.hub.ingest(message);
    let turnId = message.turnId;
    if (ingested.duplicate) {
      followed.stop();
      turnId = (await firstAnswer(deps, ingested)).id;
      followed = await followTurn(events, message.sessionId, turnId, { replay: true });
      const running = (await deps.hub.findSession(message.sessionId))?.turnId === turnId;
      const kept = await Promise.race([followed.outcome, new Promise<null>((resolve) => setImmediate(() => resolve(null)))]);
      if (kept === null && !running)
        throw new AppError('CONFLICT', 'This Idempotency-Key was used for a turn that has ended; its reply is in the session history.');
    }
    const timeout = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), deps.syncTimeoutMs);
    });
    const outcome = await Promise.race([followed.outcome, timeout]);
    if (outcome === 'timeout') {
      throw new AppError(
        'SERVICE_UNAVAILABLE',
        `The turn did not finish within ${Math.round(deps.syncTimeoutMs / 1000)} s; it goes on — follow it on the WebSocket.`,
        {
          headers: { 'Retry-After': '5' },
        },
      );
    }
    return outcomeAnswer(outcome, turnId);
  } finally {
    clearTimeout(timer);
    followed.stop();
  }
}
