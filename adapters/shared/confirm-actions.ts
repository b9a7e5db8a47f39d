/** The six answers to a `tool_confirm_request` (spec, tool_confirm), in the order chat buttons show them. */
export const CONFIRM_ACTIONS = ['allow', 'deny', 'allow_all', 'disable', 'forbid_all', 'cancel'] as const;
export type ConfirmAction = (typeof CONFIRM_ACTIONS)[number];

/** Each action's button title, the same words on every chat channel that shows them (Telegram, webchat). */
export const ACTION_TITLES: Record<ConfirmAction, string> = {
  allow: 'Allow once',
  deny: 'Deny',
  allow_all: 'Always allow',
  disable: 'Disable tool',
  forbid_all: 'Block all tools this turn',
  cancel: 'Cancel',
};
