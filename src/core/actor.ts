/**
 * Who did something the audit trail records: a user of the hub (web, CLI, API key), a person on a
 * chat platform (a Slack or Telegram contact, known by the platform's id), or the hub itself (a
 * confirmation that timed out, a workflow sync from a file).
 */
export type Actor =
  | { kind: 'user'; id: string; name?: string | null }
  | { kind: 'contact'; channel: string; id: string; name?: string | null }
  | { kind: 'system'; id: string; name?: string | null };

/** One string per actor, as stored and filtered on: `user:<id>`, `slack:U123`, `system:timeout`. */
export function actorKey(actor: Actor): string {
  return actor.kind === 'contact' ? `${actor.channel}:${actor.id}` : `${actor.kind}:${actor.id}`;
}

/** A caller of the API (a JWT or an API key of that user). */
export function userActor(principal: { userId: string; username: string }): Actor {
  return { kind: 'user', id: principal.userId, name: principal.username };
}

/** The hub acting on its own (`system:<reason>`). */
export function systemActor(reason: string): Actor {
  return { kind: 'system', id: reason };
}
