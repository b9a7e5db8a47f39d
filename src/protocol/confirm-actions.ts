/** The six answers to a `tool_confirm_request` (spec, tool_confirm), in the order of its table. */
export const CONFIRM_ACTIONS = ['allow', 'deny', 'allow_all', 'disable', 'forbid_all', 'cancel'] as const;
export type ConfirmAction = (typeof CONFIRM_ACTIONS)[number];
