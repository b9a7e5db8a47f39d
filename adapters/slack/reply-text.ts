import { escapeText } from './confirm-buttons';
import { SLACK_LIMITS } from './limits';

export const REPLY_TEXT = {
  placeholder: '_…_',
  /** Internal errors reach people only as this; the details go to the logs. */
  apology: 'Sorry, something went wrong while answering. Please try again in a moment.',
  cancelled: 'The answer was cancelled.',
  busy: 'Still answering your previous message; please wait for it to finish.',
} as const;

/** A reply as Slack `text` (mrkdwn): Slack's control characters escaped, cut to the message limit. */
export function slackText(text: string): string {
  const escaped = escapeText(text);
  return escaped.length > SLACK_LIMITS.maxMessageChars ? `${escaped.slice(0, SLACK_LIMITS.maxMessageChars)}…` : escaped || ' ';
}

/**
 * A reply as `markdown_text` (streamed replies): Markdown stays Markdown, but Slack's special
 * tokens (`<!channel>`, `<@U…>`, `<#C…>`) are broken with a zero-width space so a model cannot
 * ping a channel or a person. The change only inserts after a `<`, so the rendering of a prefix of
 * a text is a prefix of the text's rendering (appends stay deltas). Not cut: see `markdownReply`.
 */
export function slackMarkdown(text: string): string {
  return text.replace(/<(?=[!@#])/g, '<\u200B');
}

/** The final streamed reply: rendered, and cut to the message limit like `slackText`. */
export function markdownReply(text: string): string {
  const rendered = slackMarkdown(text);
  return rendered.length > SLACK_LIMITS.maxMessageChars ? `${rendered.slice(0, SLACK_LIMITS.maxMessageChars)}…` : rendered || ' ';
}
