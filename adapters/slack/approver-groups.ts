import type { WebClient } from '@slack/web-api';
import type { ApproverGroups } from '../../src/core/hub';
import { ApproverCache } from '../shared/approver-cache';

/**
 * Whether a Slack user is in a user group, asked when their click arrives (`usergroups.users.list`,
 * kept at most 60 s): an approval policy's `slack_usergroup`. A failure to list the group refuses
 * the click (the hub says so to the clicker).
 */
export class SlackApproverGroups {
  private readonly members = new ApproverCache<readonly string[]>();

  forClicker(client: WebClient, userId: string): ApproverGroups {
    return { isMember: async (group) => (await this.list(client, group)).includes(userId) };
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
