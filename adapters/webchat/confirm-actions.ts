/** The six answers to a `tool_confirm_request` (spec, tool_confirm), in the order the quick replies show. */
export const CONFIRM_ACTIONS = ['allow', 'deny', 'allow_all', 'disable', 'forbid_all', 'cancel'] as const;
export type ConfirmAction = (typeof CONFIRM_ACTIONS)[number];

/** Each action's quick-reply title (also shown as the visitor's message once clicked). */
export const ACTION_TITLES: Record<ConfirmAction, string> = {
  allow: 'Allow once',
  deny: 'Deny',
  allow_all: 'Always allow',
  disable: 'Disable tool',
  forbid_all: 'Block all tools this turn',
  cancel: 'Cancel',
};
