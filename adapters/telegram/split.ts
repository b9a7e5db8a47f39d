/** Telegram's split rules are the shared ones (a chat channel's `cadence.maxMessageChars`). */
export { splitMessage } from '../shared/split-message';
