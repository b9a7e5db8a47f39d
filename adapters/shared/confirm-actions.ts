import type { ConfirmAction } from '../../src/core/events';

/** Each action's button title, the same words on every chat channel that shows them (Telegram, webchat). */
export const ACTION_TITLES: Record<ConfirmAction, string> = {
  allow: 'Allow once',
  deny: 'Deny',
  allow_all: 'Always allow',
  disable: 'Disable tool',
  forbid_all: 'Block all tools this turn',
  cancel: 'Cancel',
};
