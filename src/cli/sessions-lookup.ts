import type { HubClient } from './api-client';
import { DEFAULTS } from './api-client';
import { CliError, EXIT } from './exit-codes';
import type { MessageView, Page, SessionView } from '../protocol/payloads';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** The shortest id prefix accepted for a session or key (shorter ones match too much). */
export const MIN_ID_PREFIX = 4;

/** Lists show ids by their first 8 characters (like git's short hashes); every command takes them. */
export function shortId(id: string): string {
  return id.slice(0, 8);
}

/** Every item of a list endpoint, following `next_cursor` (at most `limit` items when given). */
export async function listAll<T>(client: HubClient, path: string, query: Record<string, string> = {}, limit = Infinity): Promise<T[]> {
  const all: T[] = [];
  let cursor: string | null = null;
  do {
    const params = new URLSearchParams({ ...query, limit: String(DEFAULTS.pageSize) });
    if (cursor) params.set('cursor', cursor);
    const page: Page<T> = await client.get(`${path}?${params}`);
    all.push(...page.items);
    cursor = page.has_more && all.length < limit ? page.next_cursor : null;
  } while (cursor);
  return all.slice(0, limit);
}

/**
 * A session named by its id or a unique beginning of it (at least 4 characters, as `sessions list`
 * shows them). Archived sessions count too: they can be read and restored.
 */
export async function resolveSession(client: HubClient, reference: string): Promise<SessionView> {
  const wanted = reference.trim().toLowerCase();
  if (UUID.test(wanted)) return client.get<SessionView>(`/sessions/${wanted}`);
  if (wanted.length < MIN_ID_PREFIX || !/^[0-9a-f-]+$/.test(wanted)) {
    throw new CliError(`"${reference}" is not a session id (give the id, or at least its first ${MIN_ID_PREFIX} characters, from \`switchboard sessions\`).`);
  }
  const matches = (await listAll<SessionView>(client, '/sessions', { include_archived: 'true' })).filter((session) => session.id.startsWith(wanted));
  if (matches.length === 1) return matches[0]!;
  if (matches.length === 0) throw new CliError(`No session of yours starts with "${reference}".`, EXIT.REFUSED);
  throw new CliError(
    `"${reference}" matches ${matches.length} sessions (${matches.map((session) => session.id).join(', ')}): give more of the id.`,
    EXIT.REFUSED,
  );
}

/** The caller's most recently updated open web session (what `chat` resumes), or null. */
export async function latestOwnSession(client: HubClient, userId: string): Promise<SessionView | null> {
  const page = await client.get<Page<SessionView>>(`/sessions?limit=${DEFAULTS.pageSize}`);
  const own = page.items.filter((session) => session.owner_id === userId && session.channel === 'web' && session.archived_at === null);
  own.sort((left, right) => right.updated_at.localeCompare(left.updated_at));
  return own[0] ?? null;
}

/** A session's whole history, oldest first. */
export function fullHistory(client: HubClient, sessionId: string): Promise<MessageView[]> {
  return listAll<MessageView>(client, `/sessions/${sessionId}/messages`);
}

/**
 * The reply stored for a turn (its user message id): the last assistant message after that user
 * message and before the next one, without tool calls. Null when there is none (yet).
 */
export function replyOfTurn(history: readonly MessageView[], turnId: string): MessageView | null {
  const start = history.findIndex((message) => message.id === turnId);
  if (start < 0) return null;
  let reply: MessageView | null = null;
  for (const message of history.slice(start + 1)) {
    if (message.role === 'user') break;
    if (message.role === 'assistant' && message.tool_calls.length === 0) reply = message;
  }
  return reply;
}
