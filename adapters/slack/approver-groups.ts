import type { WebClient } from '@slack/web-api';
import type { ApproverGroups } from '../../src/core/hub';
import { ApproverCache } from '../shared/approver-cache';

/** How the hub names a Slack user group in an approval's text (src/approvals/approvers.ts `describeApprovers`). */
const GROUP_IN_TEXT = /Slack group (S[A-Z0-9]{2,30})\b/;

/**
 * Whether a Slack user is in a user group, asked when their click arrives (`usergroups.users.list`,
 * kept at most 60 s): an approval policy's `slack_usergroup`. A failure to list the group refuses
 * the click (the hub says so to the clicker). Also the groups' handles (`usergroups.list`, kept as
 * long), so a question names `@sre-oncall` rather than `S0123ABCD`.
 */
export class SlackApproverGroups {
  private readonly members = new ApproverCache<readonly string[]>();
  private readonly handles = new ApproverCache<ReadonlyMap<string, string>>();

  forClicker(client: WebClient, userId: string): ApproverGroups {
    return { isMember: async (group) => (await this.list(client, group)).includes(userId) };
  }

  /**
   * `text` with each `Slack group S0123ABCD` written as the group's handle (`@sre-oncall`); where
   * Slack cannot say (no `usergroups:read` scope, an unknown group, no answer) the id stays.
   */
  async named(client: WebClient, text: string): Promise<string> {
    if (!GROUP_IN_TEXT.test(text)) return text;
    let handles: ReadonlyMap<string, string>;
    try {
      handles = await this.handles.get('all', () => listHandles(client));
    } catch {
      return text;
    }
    return text.replace(new RegExp(GROUP_IN_TEXT.source, 'g'), (whole, id: string) => {
      const handle = handles.get(id);
      return handle ? `@${handle}` : whole;
    });
  }

  private list(client: WebClient, group: string): Promise<readonly string[]> {
    return this.members.get(group, async () => {
      try {
        const answer = (await client.apiCall('usergroups.users.list', { usergroup: group })) as { users?: unknown };
        return Array.isArray(answer.users) ? (answer.users as string[]) : [];
      } catch (error) {
        const code = (error as { data?: { error?: string } }).data?.error ?? 'no answer';
        throw new Error(`Slack did not list the members of user group ${group}: ${code}`);
      }
    });
  }
}

/** Every user group's handle by id (`usergroups.list`). */
async function listHandles(client: WebClient): Promise<ReadonlyMap<string, string>> {
  const answer = (await client.apiCall('usergroups.list', { include_disabled: false })) as { usergroups?: unknown };
  const handles = new Map<string, string>();
  for (const group of Array.isArray(answer.usergroups) ? (answer.usergroups as { id?: unknown; handle?: unknown }[]) : []) {
    if (typeof group.id === 'string' && typeof group.handle === 'string' && group.handle !== '') handles.set(group.id, group.handle);
  }
  return handles;
}
