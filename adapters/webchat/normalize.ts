import { z } from 'zod';
import { channelOwner, formatSessionKey } from '../../src/core/channel';
import type { InboundMessage } from '../../src/core/inbound';
import { CONFIRM_ACTIONS, type ConfirmAction } from '../../src/core/events';

/** This channel's name: in messages, session keys (`webchat::…`) and binding channels (`webchat`). */
export const WEBCHAT_CHANNEL = 'webchat';

/** Contact tags taken from one message's `customData`, at most. */
export const MAX_CONTACT_TAGS = 10;
/** A contact tag's length limit (as workflows' `triggers.contact_tags`). */
export const MAX_TAG_CHARS = 64;

/** One widget session is one hub session (decisions.md §3): `webchat::<conversation>`. */
export function webchatSessionKey(conversation: string): string {
  return formatSessionKey(WEBCHAT_CHANNEL, conversation);
}

/** What the widget sends with `user_uttered` (Rasa's socket.io channel): `{message, customData, session_id}`. */
const userUttered = z.object({ message: z.string(), customData: z.unknown().optional(), session_id: z.unknown().optional() });

export type UserUttered = z.infer<typeof userUttered>;

/** The `user_uttered` payload, or null when it is not one (the widget's own always is). */
export function parseUserUttered(data: unknown): UserUttered | null {
  const parsed = userUttered.safeParse(data);
  return parsed.success ? parsed.data : null;
}

/** The `session_id` a `session_request` names (null when none: a first visit). */
export function requestedSessionId(data: unknown): unknown {
  return typeof data === 'object' && data !== null ? ((data as { session_id?: unknown }).session_id ?? null) : null;
}

/**
 * Confirmation buttons send their choice back as a Rasa-style payload, `/<intent>{json}`:
 * `/tool_confirm{"confirmation_id":"…","action":"allow"}`. Any other text, `/info` or a site's own
 * `/payload` included, is a message for the hub.
 */
export const CONFIRM_INTENT = '/tool_confirm';

const confirmEntities = z.strictObject({ confirmation_id: z.string().min(1).max(200), action: z.enum(CONFIRM_ACTIONS) });

export function confirmPayload(confirmationId: string, action: ConfirmAction): string {
  return `${CONFIRM_INTENT}${JSON.stringify({ confirmation_id: confirmationId, action })}`;
}

/** The choice a confirmation button sent, or null when the text is not one. */
export function parseConfirmPayload(text: string): { confirmationId: string; action: ConfirmAction } | null {
  const trimmed = text.trim();
  if (!trimmed.startsWith(`${CONFIRM_INTENT}{`)) return null;
  let entities: unknown;
  try {
    entities = JSON.parse(trimmed.slice(CONFIRM_INTENT.length));
  } catch {
    return null;
  }
  const parsed = confirmEntities.safeParse(entities);
  return parsed.success ? { confirmationId: parsed.data.confirmation_id, action: parsed.data.action } : null;
}

const TAG_KEY = /^[A-Za-z0-9_-]{1,32}$/;

/**
 * Contact tags from the widget's `customData` (set by the page that embeds it): each string of
 * `customData.tags`, and each other scalar entry as `key:value` (`{"language": "en"}` → `language:en`,
 * what Rasa sites already send). The page sets them, so a visitor can too: route on them, never
 * grant anything by them. Tags that are empty, too long or hold control characters are dropped.
 */
export function contactTags(customData: unknown): string[] {
  if (typeof customData !== 'object' || customData === null || Array.isArray(customData)) return [];
  const tags: string[] = [];
  const data = customData as Record<string, unknown>;
  if (Array.isArray(data.tags)) for (const tag of data.tags) if (typeof tag === 'string') tags.push(tag.trim());
  for (const [key, value] of Object.entries(data)) {
    if (key === 'tags' || !TAG_KEY.test(key)) continue;
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') tags.push(`${key}:${String(value).trim()}`);
  }
  const valid = tags.filter((tag) => tag.length > 0 && tag.length <= MAX_TAG_CHARS && !/[\u0000-\u001f\u007f]/.test(tag) && !tag.endsWith(':'));
  return [...new Set(valid)].slice(0, MAX_CONTACT_TAGS);
}

/** A visitor's message as the hub takes it in: the session by key, the visitor as its contact. */
export function toInbound(conversation: string, text: string, tags: string[], raw: unknown): InboundMessage {
  return {
    channel: WEBCHAT_CHANNEL,
    sessionKey: webchatSessionKey(conversation),
    sender: { userId: channelOwner(WEBCHAT_CHANNEL), contactId: conversation, displayName: `visitor ${conversation.slice(0, 8)}`, tags },
    text,
    mode: 'normal',
    metadata: {},
    raw,
  };
}
