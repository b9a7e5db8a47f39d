import type { ApproverGroups } from '../../src/core/hub';
import { CHAT_ADMINS_GROUP_NAME } from './approver-group-name';
import { ApproverCache } from '../shared/approver-cache';

/** Asks the Bot API for one chat member (`getChatMember`): their status in the chat. */
export type ChatMemberStatus = (chatId: number, userId: number) => Promise<string>;

/**
 * Whether a Telegram user administers the chat a turn runs in, asked when their click arrives
 * (`getChatMember`, kept at most 60 s): an approval policy's `telegram_chat_admins`. A failure to ask
 * refuses the click.
 */
export class TelegramApproverGroups {
  private readonly statuses = new ApproverCache<string>();

  constructor(private readonly status: ChatMemberStatus) {}

  forClicker(chatId: number, userId: number): ApproverGroups {
    return {
      isMember: async (group) => {
        if (group !== CHAT_ADMINS_GROUP_NAME) return false;
        const status = await this.statuses.get(`${chatId}:${userId}`, async () => {
          try {
            return await this.status(chatId, userId);
          } catch (error) {
            throw new Error(`Telegram did not say whether you administer this chat: ${error instanceof Error ? error.message : String(error)}`);
          }
        });
        return status === 'creator' || status === 'administrator';
      },
    };
  }
}
