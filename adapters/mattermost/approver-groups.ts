import type { ApproverGroups } from '../../src/core/hub';
import { ApproverCache } from '../shared/approver-cache';
import type { MattermostApi } from './mattermost-api';

/** What an approval policy's Mattermost approvers are asked as (src/approvals/approvers.ts `CHAT_ADMINS_GROUP`, `MATTERMOST_GROUP_PREFIX`). */
export const APPROVER_GROUP_NAMES = { channelAdmins: 'chat_admins', groupPrefix: 'group:' } as const;

/** Named limits of the approver checks (adapters/README.md: every limit a named default). */
export const APPROVER_GROUP_LIMITS = {
  /** Members read a page at a time… */
  membersPerPage: 200,
  /** …at most this many pages: a larger group is read this far, and a member past it is refused (named in the log). */
  maxMemberPages: 10,
} as const;

/** A Mattermost group id: 26 lowercase letters and digits. */
const GROUP_ID = /^[a-z0-9]{26}$/;

/**
 * Who may approve on Mattermost, asked when their click arrives and kept at most 60 s: an approval
 * policy's `mattermost_group` (the group's members, `GET /api/v4/groups/{id}/members`; a name is
 * found with `GET /api/v4/groups?q=`) and `mattermost_channel_admins` (the clicker's roles in the
 * channel the turn runs in, `GET /api/v4/channels/{id}/members/{user}`: `channel_admin`). When
 * Mattermost does not answer (or refuses the bot) the click is refused, saying so.
 */
export class MattermostApproverGroups {
  private readonly members = new ApproverCache<ReadonlySet<string>>();
  private readonly admins = new ApproverCache<boolean>();

  constructor(private readonly api: Pick<MattermostApi, 'channelMember' | 'groupsNamed' | 'groupMembers'>) {}

  forClicker(channelId: string, userId: string): ApproverGroups {
    return {
      isMember: async (group) => {
        if (group === APPROVER_GROUP_NAMES.channelAdmins) return this.channelAdmin(channelId, userId);
        if (group.startsWith(APPROVER_GROUP_NAMES.groupPrefix))
          return (await this.groupMembers(group.slice(APPROVER_GROUP_NAMES.groupPrefix.length))).has(userId);
        return false;
      },
    };
  }

  private channelAdmin(channelId: string, userId: string): Promise<boolean> {
    return this.admins.get(`${channelId}:${userId}`, async () => {
      try {
        const member = await this.api.channelMember(channelId, userId);
        return member.scheme_admin === true || member.roles.split(' ').includes('channel_admin');
      } catch (error) {
        throw new Error(`Mattermost did not say whether you administer this channel: ${reason(error)}`);
      }
    });
  }

  private groupMembers(group: string): Promise<ReadonlySet<string>> {
    return this.members.get(group, async () => {
      try {
        const id = await this.groupId(group);
        const members = new Set<string>();
        const { membersPerPage, maxMemberPages } = APPROVER_GROUP_LIMITS;
        for (let page = 0; page < maxMemberPages; page++) {
          const answer = await this.api.groupMembers(id, page, membersPerPage);
          for (const member of answer.members ?? []) members.add(member.id);
          if ((answer.members ?? []).length < membersPerPage) break;
        }
        return members;
      } catch (error) {
        throw new Error(`Mattermost did not list the members of group ${group}: ${reason(error)}`);
      }
    });
  }

  /** A group's id: as given, or found by its name (`@` or not). */
  private async groupId(group: string): Promise<string> {
    if (GROUP_ID.test(group)) return group;
    const name = group.replace(/^@/, '').toLowerCase();
    const found = (await this.api.groupsNamed(name)).find((candidate) => candidate.name?.toLowerCase() === name);
    if (!found) throw new Error('no such group');
    return found.id;
  }
}

function reason(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
