import { z } from 'zod';
import { channelOwner, formatSessionKey } from '../../src/core/channel';
import type { FieldIssues } from '../../src/core/errors';
import type { InboundMessage } from '../../src/core/inbound';

/** This channel's name: in messages, session keys (`slack::…`) and binding channels (`slack`, `slack:<channel id>`). */
export const SLACK_CHANNEL = 'slack';

/** The fields of a Slack `message` / `app_mention` event this channel reads. */
export interface SlackMessageEvent {
  type: string;
  subtype?: string;
  user?: string;
  bot_id?: string;
  text?: string;
  ts: string;
  thread_ts?: string;
  channel: string;
  channel_type?: string;
  team?: string;
}

const optionalString = z.string().optional();
/** The fields of a message event this channel reads, with Slack's types; others pass through unread. */
const messageEventSchema = z.looseObject({
  type: z.string(),
  subtype: optionalString,
  user: optionalString,
  bot_id: optionalString,
  text: optionalString,
  ts: z.string(),
  thread_ts: optionalString,
  channel: z.string(),
  channel_type: optionalString,
  team: optionalString,
  deleted_ts: optionalString,
  message: z.looseObject({ ts: optionalString, user: optionalString, text: optionalString }).optional(),
});

/**
 * The 422 issues of a `message` / `app_mention` event that is not shaped as Slack sends one (a
 * signed request with `user: 42` or no `channel`), or null. Checked before it is read, so it is
 * refused rather than failing halfway with a 500.
 */
export function messageEventIssues(event: unknown): FieldIssues | null {
  const result = messageEventSchema.safeParse(event);
  if (result.success) return null;
  const fields: FieldIssues = {};
  for (const issue of result.error.issues) (fields[['event', ...issue.path].join('.')] ??= []).push({ code: issue.code, message: issue.message });
  return fields;
}

/** The top-level payload types Slack sends an Events API / interactivity endpoint (and bolt answers). */
const PAYLOAD_TYPES = [
  'event_callback',
  'url_verification',
  'app_rate_limited',
  'block_actions',
  'block_suggestion',
  'interactive_message',
  'dialog_submission',
  'dialog_suggestion',
  'dialog_cancellation',
  'view_submission',
  'view_closed',
  'shortcut',
  'message_action',
] as const;
const payloadSchema = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('event_callback'), event: z.looseObject({ type: z.string() }) }),
  z.looseObject({ type: z.enum(PAYLOAD_TYPES.filter((type) => type !== 'event_callback') as [string, ...string[]]) }),
]);

/** The 422 issues of a signed body that is no Slack payload (an array, no `type`, `event: null`), or null. */
export function payloadIssues(body: unknown): FieldIssues | null {
  const result = payloadSchema.safeParse(body);
  // bolt reads a message event's `user` and `channel` before any listener: their types are checked here.
  if (result.success) {
    const event = (result.data as { event?: { type: string } }).event;
    return event && (event.type === 'message' || event.type === 'app_mention') ? messageEventIssues(event) : null;
  }
  const fields: FieldIssues = {};
  for (const issue of result.error.issues) (fields[issue.path.join('.') || 'body'] ??= []).push({ code: issue.code, message: issue.message });
  return fields;
}

/** Where a conversation's replies go: the channel, and the thread (null: top level of a DM). */
export interface SlackConversation {
  team: string;
  channel: string;
  threadTs: string | null;
}

/**
 * Which events start a turn: direct messages (`message` in an `im`) and mentions in channels
 * (`app_mention`). Bot posts (ours included), edits, deletions and other subtypes are ignored, and
 * a plain channel `message` is ignored too, because its mention arrives again as `app_mention`.
 */
export function isConversationalEvent(event: SlackMessageEvent, botUserId: string | undefined): boolean {
  if (event.bot_id || event.subtype !== undefined || !event.user) return false;
  if (botUserId && event.user === botUserId) return false;
  if (event.type === 'app_mention') return event.channel_type !== 'im';
  return event.type === 'message' && event.channel_type === 'im';
}

/**
 * The conversation a message belongs to (decisions.md §3): a thread is one session
 * (`slack::T:C:thread_ts`); a mention at a channel's top level starts a thread under itself; a
 * direct message outside a thread belongs to the DM as a whole (`slack::T:D`).
 */
export function conversationOf(event: SlackMessageEvent, teamId: string): SlackConversation {
  const threadTs = event.thread_ts ?? (event.type === 'app_mention' ? event.ts : null);
  return { team: event.team ?? teamId, channel: event.channel, threadTs };
}

/** `slack::<team>:<channel>[:<thread ts>]`. */
export function sessionKeyOf(conversation: SlackConversation): string {
  const parts = [conversation.team, conversation.channel, ...(conversation.threadTs ? [conversation.threadTs] : [])];
  return formatSessionKey(SLACK_CHANNEL, parts.join(':'));
}

/** The conversation a session key's `<team>:<channel>[:<thread ts>]` part names, or null when it names none. */
export function conversationOfKey(conversation: string): SlackConversation | null {
  const [team, channel, threadTs, ...rest] = conversation.split(':');
  if (!team || !channel || threadTs === '' || rest.length > 0) return null;
  return { team, channel, threadTs: threadTs ?? null };
}

/** Removes the bot's mention (`<@U123>` or `<@U123|name>`), so `@bot /help` reaches the worker as `/help`. */
export function stripBotMention(text: string, botUserId: string | undefined): string {
  const mention = botUserId ? new RegExp(`<@${botUserId}(\\|[^>]*)?>`, 'g') : /^\s*<@[UW][A-Z0-9]+(\|[^>]*)?>/;
  return text.replace(mention, ' ').replace(/\s+/g, ' ').trim();
}

export interface NormalizeInput {
  event: SlackMessageEvent;
  teamId: string;
  botUserId: string | undefined;
  displayName: string | undefined;
}

/** A Slack event as the hub's InboundMessage, or null when it is not for the agent (or says nothing). */
export function normalizeMessage({ event, teamId, botUserId, displayName }: NormalizeInput): InboundMessage | null {
  if (!isConversationalEvent(event, botUserId)) return null;
  const text = stripBotMention(event.text ?? '', botUserId);
  if (text === '') return null;
  const conversation = conversationOf(event, teamId);
  return {
    channel: SLACK_CHANNEL,
    sessionKey: sessionKeyOf(conversation),
    sender: { userId: channelOwner(SLACK_CHANNEL), contactId: event.user, displayName },
    text,
    mode: 'normal',
    metadata: {},
    // The message's identity: Slack's retries carry the same message, so does a later edit or deletion,
    // and a mention that arrives as both `message` and `app_mention` is taken in once.
    externalId: messageIdentity(event.channel, event.ts),
    raw: event,
  };
}

/** `<channel>:<ts>`: a Slack message's identity (ts is unique per channel). */
export function messageIdentity(channel: string, ts: string): string {
  return `${channel}:${ts}`;
}

/** The `message_changed` / `message_deleted` events this channel reads. */
export interface SlackChangeEvent {
  type: 'message';
  subtype: 'message_changed' | 'message_deleted';
  channel: string;
  message?: { ts: string; text?: string; user?: string };
  deleted_ts?: string;
}

/**
 * A person's edit (new text) or deletion (null text) of a message, named as `normalizeMessage`
 * named it; null for anything else (bots' edits, our own).
 */
export function normalizeChange(event: SlackChangeEvent, botUserId: string | undefined): { externalId: string; text: string | null } | null {
  if (event.subtype === 'message_deleted') return event.deleted_ts ? { externalId: messageIdentity(event.channel, event.deleted_ts), text: null } : null;
  const message = event.message;
  if (event.subtype !== 'message_changed' || !message?.ts || !message.user || message.user === botUserId) return null;
  const text = stripBotMention(message.text ?? '', botUserId);
  return text === '' ? null : { externalId: messageIdentity(event.channel, message.ts), text };
}
