/** Mattermost's limit on a post's message (16,383 characters): a longer answer is split. */
export const MAX_POST_CHARS = 16_383;

export { APOLOGY_TEXT, CANCELLED_TEXT, STALE_CONFIRMATION_TEXT, STILL_ANSWERING_TEXT } from '../shared/chat-texts';

/** The reaction on a post that waits behind the running turn. */
export const WAITING_EMOJI = 'hourglass_flowing_sand';

/**
 * Text the bot posts stays Markdown (Mattermost renders it), with the channel-wide mentions broken
 * by a zero-width space, so that a model's answer cannot notify a whole channel.
 */
export function mattermostText(text: string): string {
  return text.replace(/@(all|channel|here)\b/gi, '@\u200b$1');
}
