import type { HubClient } from '../api-client';
import { CliError, EXIT } from '../exit-codes';
import type { SessionView, UserView } from '../../protocol/payloads';
import { latestOwnSession, resolveSession } from '../sessions-lookup';

export interface SessionChoice {
  /** An id or id prefix (`--session`). */
  session?: string;
  /** Start a new session (`--new`), named `name` when given. */
  new?: boolean;
  name?: string;
  workflow?: string;
}

/**
 * The session a chat talks in: `--session`, a new one with `--new`, or else the caller's most
 * recently used web session (a new one when there is none). A `--workflow` is checked first, so a
 * typo fails before anything is created.
 */
export async function chooseSession(client: HubClient, choice: SessionChoice): Promise<{ session: SessionView; resumed: boolean }> {
  if (choice.name !== undefined && !choice.new) throw new CliError('--name names a new session: use it with --new.');
  if (choice.workflow) await client.get(`/assistant/workflows/${encodeURIComponent(choice.workflow)}`);
  const create = () =>
    client.post<SessionView>('/sessions', { ...(choice.name ? { name: choice.name } : {}), ...(choice.workflow ? { workflow: choice.workflow } : {}) });
  if (choice.new) return { session: await create(), resumed: false };
  if (choice.session) {
    const session = await resolveSession(client, choice.session);
    if (session.archived_at !== null)
      throw new CliError(`Session ${session.id} is archived: \`switchboard sessions restore ${session.id}\` brings it back.`, EXIT.REFUSED);
    return { session, resumed: true };
  }
  const me = await client.get<UserView>('/auth/me');
  const latest = await latestOwnSession(client, me.id);
  return latest ? { session: latest, resumed: true } : { session: await create(), resumed: false };
}
