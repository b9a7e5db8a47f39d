/** The group an approval policy's `telegram_chat_admins` asks for (src/approvals/approvers.ts `CHAT_ADMINS_GROUP`). */
export const CHAT_ADMINS_GROUP_NAME = 'chat_admins';
