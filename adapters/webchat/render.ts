import { CONFIRM_ACTIONS } from '../../src/core/events';
import { ACTION_TITLES } from '../shared/confirm-actions';
import { imagesAsLinks, replaceInlineLinks } from './markdown-links';
import { confirmPayload } from './normalize';
import { takeParagraphs } from '../shared/paragraphs';

/** A quick reply of Rasa's socket.io channel: a title shown, a payload sent back when clicked. */
export interface QuickReply {
  content_type: 'text';
  title: string;
  payload: string;
}

/**
 * A `bot_uttered` message as the widget shows it. The widget tells message kinds apart by their keys
 * alone (`{text}` is text, `{text, quick_replies}` a choice), so nothing else travels with them.
 */
export type BotMessage = { text: string } | { text: string; quick_replies: QuickReply[] };

export { APOLOGY_TEXT, CANCELLED_TEXT, STALE_CONFIRMATION_TEXT, STILL_ANSWERING_TEXT } from '../shared/chat-texts';
/** The answer was empty (nothing streamed, nothing in `done`). */
export const EMPTY_ANSWER_TEXT = '…';
export const TOO_FAST_TEXT = 'You are sending messages faster than this chat accepts. Please wait a minute and send it again.';
export const TOO_MANY_SESSIONS_TEXT = 'Too many new chats have been started from your network in the last hour. Please try again later.';
/** An admin closed (archived) the visitor's session: the widget gets a new one. */
export const CLOSED_TEXT = 'This conversation was closed. Please send your message again to start a new one.';
export const NO_SESSION_TEXT = 'This chat is not connected yet. Please reload the page.';
export const UNREADABLE_TEXT = 'This message could not be read (it holds a NUL character). Please send it again as plain text.';

export function tooLongText(chars: number, limit: number): string {
  return `Your message is too long (${chars} characters; this chat takes at most ${limit}). Please shorten it and send it again.`;
}

/** A tool asks for confirmation: its description, and the six actions as quick replies. */
export function confirmationMessage(question: string, confirmationId: string): BotMessage {
  return {
    text: sanitizeMarkdown(question),
    quick_replies: CONFIRM_ACTIONS.map((action) => ({ content_type: 'text', title: ACTION_TITLES[action], payload: confirmPayload(confirmationId, action) })),
  };
}

/** Link targets a visitor may be sent to; anything else (`javascript:`, `data:`, relative paths) stays text. */
const SAFE_TARGET = /^(https?:\/\/|mailto:|tel:)/i;
const AUTOLINK = /<([A-Za-z][A-Za-z0-9+.-]{1,31}:[^<>\s]*)>/g;
const DEFINITION = /^ {0,3}\[[^\]\n]+\]:\s*<?(\S*?)>?(?:\s.*)?$/gm;

/**
 * The answer's Markdown as the widget may render it. The widget renders bot text with
 * react-markdown and no link filter, so an answer shaped by a fetched page or a document could put
 * a `javascript:` link before a visitor: links and link definitions whose target is not http(s),
 * mailto or tel become their text. Images become links (attachments as links): the widget would
 * otherwise load any third-party URL into the visitor's browser. HTML is escaped by the widget.
 */
export function sanitizeMarkdown(text: string): string {
  // Images and inline links by a linear scan (markdown-links.ts); the two regexes left are linear.
  return replaceInlineLinks(imagesAsLinks(text), (whole, label, target) => (SAFE_TARGET.test(target) ? whole : label))
    .replace(AUTOLINK, (whole, target: string) => (SAFE_TARGET.test(target) ? whole : `\\<${target}\\>`))
    .replace(DEFINITION, (whole, target: string) => (SAFE_TARGET.test(target) ? whole : ''));
}

// The paragraph rules are shared (a chat channel's `cadence.paragraphs`): adapters/shared/paragraphs.ts.
export { takeParagraphs } from '../shared/paragraphs';

/** Text as widget messages: one per paragraph, or one for the whole text. */
export function textMessages(text: string, perParagraph: boolean): BotMessage[] {
  const trimmed = text.trim();
  if (!trimmed) return [];
  if (!perParagraph) return [{ text: sanitizeMarkdown(trimmed) }];
  const { paragraphs, rest } = takeParagraphs(`${trimmed}\n\n`);
  return [...paragraphs, rest.trim()].filter(Boolean).map((paragraph) => ({ text: sanitizeMarkdown(paragraph) }));
}
