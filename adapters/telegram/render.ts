import type { InlineKeyboardMarkup } from 'telegraf/types';
import { CONFIRM_ACTIONS, encodeCallbackData, type ConfirmAction } from './callback-data';

/** What the user sees while the first tokens are on their way. */
export const PLACEHOLDER_TEXT = '…';
/** Any turn error other than a cancel: the details go to the logs, never to the chat. */
export const APOLOGY_TEXT = 'Sorry, something went wrong while answering. Please try again.';
export const CANCELLED_TEXT = 'Cancelled.';
/** The chat's previous turn still runs (TURN_IN_PROGRESS): the new message is not taken. */
export const STILL_ANSWERING_TEXT = 'Still answering your previous message — please wait for it to finish.';
/** Shown for a click on a confirmation that is no longer pending (answered, timed out, turn over). */
export const STALE_CONFIRMATION_TEXT = 'This request is no longer pending.';

export const ACTION_LABELS: Record<ConfirmAction, string> = {
  allow: 'Allow once',
  deny: 'Deny',
  allow_all: 'Always allow',
  disable: 'Disable tool',
  forbid_all: 'Block all tools this turn',
  cancel: 'Cancel',
};

/** Splits a text into pieces of at most `limit` characters, at a line break or space when there is one. */
export function splitMessage(text: string, limit: number): string[] {
  const pieces: string[] = [];
  let rest = text;
  while (rest.length > limit) {
    let cut = rest.lastIndexOf('\n', limit);
    if (cut < limit / 2) cut = rest.lastIndexOf(' ', limit);
    if (cut < limit / 2) cut = limit;
    // Never split a UTF-16 surrogate pair (an emoji) in two.
    if (cut === limit && /[\uD800-\uDBFF]/.test(rest[cut - 1]!)) cut -= 1;
    pieces.push(rest.slice(0, cut));
    rest = rest.slice(cut).replace(/^[\n ]/, '');
  }
  if (rest.length > 0 || pieces.length === 0) pieces.push(rest);
  return pieces;
}

/** The streamed text as an edit shows it: the latest part when it has outgrown one message. */
export function streamingView(text: string, limit: number): string {
  if (text.trim() === '') return PLACEHOLDER_TEXT;
  return text.length <= limit ? text : `…${text.slice(text.length - limit + 1)}`;
}

/** The inline keyboard of a confirmation: all six actions, two per row. */
export function confirmationKeyboard(sessionId: string, confirmationId: string): InlineKeyboardMarkup {
  const buttons = CONFIRM_ACTIONS.map((action) => ({ text: ACTION_LABELS[action], callback_data: encodeCallbackData(sessionId, confirmationId, action) }));
  const rows = [];
  for (let index = 0; index < buttons.length; index += 2) rows.push(buttons.slice(index, index + 2));
  return { inline_keyboard: rows };
}

/** The confirmation message after a click: the question, and the choice instead of the buttons. */
export function answeredConfirmationText(question: string, action: ConfirmAction, by: string): string {
  return `${question}\n\n→ ${ACTION_LABELS[action]} (${by})`;
}
