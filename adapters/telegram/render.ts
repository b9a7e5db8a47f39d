import type { InlineKeyboardMarkup } from 'telegraf/types';
import { CONFIRM_ACTIONS, type ConfirmAction } from '../../src/core/events';
import { ACTION_TITLES } from '../shared/confirm-actions';
import { encodeCallbackData } from './callback-data';

/** Shown for an answer with no text at all (Telegram refuses an empty message). */
export const PLACEHOLDER_TEXT = '…';
export { APOLOGY_TEXT, CANCELLED_TEXT, STALE_CONFIRMATION_TEXT, STILL_ANSWERING_TEXT } from '../shared/chat-texts';

/** The buttons' titles (shared with the other chat channels that show buttons). */
export const ACTION_LABELS: Record<ConfirmAction, string> = ACTION_TITLES;

/** The streamed text as a draft or an edit shows it: the latest part when it has outgrown one message. */
export function streamingView(text: string, limit: number): string {
  if (text.trim() === '') return PLACEHOLDER_TEXT;
  if (text.length <= limit) return text;
  const tail = text.slice(text.length - limit + 1);
  // Never start with the low half of a surrogate pair (an emoji cut in two).
  return `…${/^[\uDC00-\uDFFF]/.test(tail) ? tail.slice(1) : tail}`;
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
