import type { Actor } from '../core/actor';
import type { ApproverGroups } from '../core/hub';
import type { ApproverSet } from './policy-schema';

/** A hub user as the approver check needs them (looked up when the click arrives). */
export interface HubUserFacts {
  username: string;
  role: string;
  isActive: boolean;
}

/** Finds a hub user by id (the composition root wires it to the users table). */
export type HubUserLookup = (userId: string) => Promise<HubUserFacts | null>;

/** The group a Telegram chat's administrators (or a Mattermost channel's admins) are asked as (ApproverGroups.isMember). */
export const CHAT_ADMINS_GROUP = 'chat_admins';
/** How a Mattermost group is asked for (ApproverGroups.isMember): `group:<id or name>`, never taken for `chat_admins`. */
export const MATTERMOST_GROUP_PREFIX = 'group:';

/** `hubUser`: the hub username the clicker resolved to (their own, or the one their platform id is bound to), for the audit. */
export type ApproverVerdict = { ok: true; hubUser: string | null } | { ok: false; reason: string; hubUser?: string | null };

/** Who may approve, as one line for people: `role admin, user alice, Slack group S0123ABCD`. */
export function describeApprovers(set: ApproverSet): string {
  const parts = [
    ...set.roles.map((role) => `role ${role}`),
    ...set.users.map((user) => `@${user}`),
    ...(set.slack_usergroup ? [`Slack group ${set.slack_usergroup}`] : []),
    ...(set.telegram_chat_admins ? ['the chat admins'] : []),
    ...(set.mattermost_group ? [`Mattermost group ${set.mattermost_group}`] : []),
    ...(set.mattermost_channel_admins ? ['the channel admins'] : []),
  ];
  return parts.join(', ');
}

/**
 * Whether `actor` is one of `set`'s approvers, decided now: a hub user by role or username (from
 * the users table), a chat contact by the hub user their platform id is bound to (`linkedUserId`,
 * platform-identities.ts) and else by the platform groups its channel reports at click time
 * (`groups`; a failure to answer refuses the click: fail-closed).
 */
export async function checkApprover(
  set: ApproverSet,
  actor: Actor,
  users: HubUserLookup,
  groups?: ApproverGroups,
  linkedUserId?: string | null,
): Promise<ApproverVerdict> {
  const refused = `You are not among the approvers (${describeApprovers(set)}).`;
  if (actor.kind === 'user') {
    const user = await users(actor.id);
    if (!user?.isActive) return { ok: false, reason: refused };
    const listed = set.roles.includes(user.role as 'admin' | 'user') || set.users.some((name) => name.toLowerCase() === user.username.toLowerCase());
    return listed ? { ok: true, hubUser: user.username } : { ok: false, reason: refused, hubUser: user.username };
  }
  if (actor.kind !== 'contact') return { ok: false, reason: refused };
  // Bound to a hub user: their roles and name count here as on the web; else the platform's groups decide.
  const asUser = linkedUserId ? await checkApprover(set, { kind: 'user', id: linkedUserId }, users) : null;
  if (asUser?.ok) return asUser;
  const hubUser = asUser?.hubUser ?? null;
  if (!groups) return { ok: false, reason: refused, hubUser };
  // In any one of the platform groups is enough; when none says yes and one could not answer, the click is refused saying why.
  let unanswered: string | null = null;
  for (const group of platformGroups(set, actor.channel)) {
    try {
      if (await groups.isMember(group)) return { ok: true, hubUser };
    } catch (error) {
      unanswered ??= error instanceof Error ? error.message : String(error);
    }
  }
  if (unanswered !== null) return { ok: false, reason: `Could not check whether you may approve (${unanswered}); the click is refused.`, hubUser };
  return { ok: false, reason: refused, hubUser };
}

/** The platform groups of `set` a contact of `channel` is checked against (none for that channel: empty). */
function platformGroups(set: ApproverSet, channel: string): string[] {
  if (channel === 'slack') return set.slack_usergroup ? [set.slack_usergroup] : [];
  if (channel === 'telegram') return set.telegram_chat_admins ? [CHAT_ADMINS_GROUP] : [];
  if (channel === 'mattermost') {
    return [
      ...(set.mattermost_group ? [`${MATTERMOST_GROUP_PREFIX}${set.mattermost_group}`] : []),
      ...(set.mattermost_channel_admins ? [CHAT_ADMINS_GROUP] : []),
    ];
  }
  return [];
}
