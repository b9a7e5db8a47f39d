import type { ConfirmAction } from '../../src/core/events';

/** The six answers to a `tool_confirm_request` (spec, tool_confirm) as buttons, in the spec's order. */
export const CONFIRM_BUTTONS = [
  { action: 'allow', label: 'Allow', style: 'primary' },
  { action: 'deny', label: 'Deny', style: undefined },
  { action: 'allow_all', label: 'Allow for this session', style: undefined },
  { action: 'disable', label: 'Disable tool', style: undefined },
  { action: 'forbid_all', label: 'Forbid all this turn', style: 'danger' },
  { action: 'cancel', label: 'Cancel turn', style: 'danger' },
] as const satisfies readonly { action: ConfirmAction; label: string; style: string | undefined }[];

/** Every confirmation button's action_id starts with this; the interactions listener matches it. */
export const CONFIRM_ACTION_PREFIX = 'switchboard_confirm_';

/** What a button carries back on click: which session, which confirmation, which answer. */
export interface ConfirmChoice {
  sessionId: string;
  confirmationId: string;
  action: ConfirmAction;
  /** The tool asked about, to say what was answered once the buttons are gone. */
  tool: string;
}

export function encodeChoice(choice: ConfirmChoice): string {
  return JSON.stringify({ s: choice.sessionId, c: choice.confirmationId, a: choice.action, t: choice.tool });
}

/** The choice in a button's value, or null when it is not one of ours (or was tampered with). */
export function decodeChoice(value: string | undefined): ConfirmChoice | null {
  if (!value) return null;
  try {
    const parsed = JSON.parse(value) as { s?: unknown; c?: unknown; a?: unknown; t?: unknown };
    const known = CONFIRM_BUTTONS.find((entry) => entry.action === parsed.a);
    if (typeof parsed.s !== 'string' || typeof parsed.c !== 'string' || typeof parsed.t !== 'string' || !known) return null;
    return { sessionId: parsed.s, confirmationId: parsed.c, action: known.action, tool: parsed.t };
  } catch {
    return null;
  }
}

export function actionLabel(action: ConfirmAction): string {
  return CONFIRM_BUTTONS.find((entry) => entry.action === action)!.label;
}

/** Plain text with Slack's control characters escaped (user-visible text must not become markup). */
export function escapeText(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** The Block Kit message asking for a confirmation: what the tool wants, and six buttons. */
export function confirmationBlocks(
  sessionId: string,
  request: { confirmation_id: string; tool: string; parameters: Record<string, unknown>; message: string },
) {
  const parameters = JSON.stringify(request.parameters, null, 2);
  return [
    {
      type: 'section',
      text: { type: 'mrkdwn', text: `*Confirm \`${escapeText(request.tool)}\`?*\n${escapeText(request.message)}` },
    },
    { type: 'section', text: { type: 'mrkdwn', text: `\`\`\`${escapeText(parameters).slice(0, 2_800)}\`\`\`` } },
    {
      type: 'actions',
      block_id: `confirm_${request.confirmation_id}`.slice(0, 255),
      elements: CONFIRM_BUTTONS.map((entry) => ({
        type: 'button',
        action_id: `${CONFIRM_ACTION_PREFIX}${entry.action}`,
        text: { type: 'plain_text', text: entry.label },
        value: encodeChoice({ sessionId, confirmationId: request.confirmation_id, action: entry.action, tool: request.tool.slice(0, 200) }),
        ...(entry.style ? { style: entry.style } : {}),
      })),
    },
  ];
}

/** The confirmation message after a click: the question stays, the buttons become the answer. */
export function answeredBlocks(tool: string, action: ConfirmAction, userId: string) {
  return [{ type: 'section', text: { type: 'mrkdwn', text: `*\`${escapeText(tool)}\`*: ${actionLabel(action)} — chosen by <@${userId}>` } }];
}
