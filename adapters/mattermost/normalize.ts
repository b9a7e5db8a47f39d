import type { Post } from '@mattermost/types/posts';
import { channelOwner, formatSessionKey } from '../../src/core/channel';
import type { InboundMessage } from '../../src/core/inbound';

/** This channel's name: in messages, session keys (`mattermost::…`) and binding channels (`mattermost`, `mattermost:<channel id>`). */
export const MATTERMOST_CHANNEL = 'mattermost';

/** Mattermost channel types: D direct message, G group message, O public, P private. */
export type ChannelType = 'D' | 'G' | 'O' | 'P';

/** Where a post was made and who the bot is: what deciding whether to answer it needs. */
export interface PostContext {
  botUserId: string;
  botUsername: string;
  channelType: ChannelType;
  /** The `posted` event's `mentions` (user ids), when the post came over the socket. */
  mentions?: readonly string[];
}

/** A post the channel answers: the hub's message and where the answer goes. */
export interface MattermostInbound {
  channelId: string;
  /** The thread the answer goes in ('' at the top level of a DM). */
  rootId: string;
  postId: string;
  message: InboundMessage;
}

/**
 * Session keys: a DM's top level is `mattermost::<channel id>`; any thread (a channel mention starts
 * one under itself) is `mattermost::<channel id>:<root post id>` — the session is the DM or the thread.
 */
export function mattermostSessionKey(channelId: string, rootId: string): string {
  return formatSessionKey(MATTERMOST_CHANNEL, rootId ? `${channelId}:${rootId}` : channelId);
}

/** The binding channel of a session key's conversation part: `mattermost:<channel id>`. */
export function routingChannelOf(conversation: string): string {
  const channelId = conversation.split(':')[0];
  return channelId ? `${MATTERMOST_CHANNEL}:${channelId}` : MATTERMOST_CHANNEL;
}

/** Whether the post mentions the bot (the event's `mentions`, or `@username` in the text after a catch-up). */
export function mentionsBot(post: Pick<Post, 'message'>, context: PostContext): boolean {
  if (context.mentions?.includes(context.botUserId)) return true;
  return new RegExp(`(^|[^\\w.-])@${escapeRegExp(context.botUsername)}(?![\\w-])`, 'i').test(post.message);
}

/**
 * Whether the channel takes this post at all: a person's ordinary post (not the bot's own, not another
 * bot's or a webhook's, not a system message, not deleted) with text. Where it is (a DM, a mention, a thread of the bot's) is
 * decided by the adapter.
 */
export function isPersonPost(post: Post, botUserId: string): boolean {
  // Other bots and incoming webhooks are not people: answering them could make two bots talk forever.
  const automated = post.props?.from_bot === 'true' || post.props?.from_webhook === 'true';
  return post.user_id !== botUserId && !automated && !post.type && !post.delete_at && typeof post.message === 'string' && post.message.trim() !== '';
}

/**
 * A post → the hub's InboundMessage. `inThread`: the post is a reply in a thread of the bot (answered
 * without a mention). The `@bot` mention is taken out of the text; the post id is the externalId, so
 * a post seen twice (the socket, then a catch-up) is taken in once.
 */
export function normalizePost(post: Post, context: PostContext, sender: { displayName: string; tags: string[] }): MattermostInbound | null {
  const direct = context.channelType === 'D';
  const rootId = post.root_id || (direct ? '' : post.id);
  const text = stripMention(post.message, context.botUsername);
  if (text === '') return null;
  return {
    channelId: post.channel_id,
    rootId,
    postId: post.id,
    message: {
      channel: MATTERMOST_CHANNEL,
      sessionKey: mattermostSessionKey(post.channel_id, rootId),
      sender: { userId: channelOwner(MATTERMOST_CHANNEL), contactId: post.user_id, displayName: sender.displayName, tags: sender.tags },
      text,
      mode: 'normal',
      metadata: {},
      externalId: post.id,
      raw: post,
    },
  };
}

/** `@switchboard what is up` → `what is up` (every mention of the bot, case-insensitive). */
export function stripMention(text: string, botUsername: string): string {
  return text.replace(new RegExp(`(^|[^\\w.-])@${escapeRegExp(botUsername)}(?![\\w-])[:,]?`, 'gi'), '$1').trim();
}

/** A post of a `posted` / `post_edited` / `post_deleted` event (Mattermost sends it as a JSON string). */
export function eventPost(data: Record<string, unknown>): Post | null {
  if (typeof data.post !== 'string') return null;
  try {
    const post = JSON.parse(data.post) as Post;
    return typeof post?.id === 'string' && typeof post.channel_id === 'string' ? post : null;
  } catch {
    return null;
  }
}

/** The `mentions` of a `posted` event (a JSON string of user ids), if any. */
export function eventMentions(data: Record<string, unknown>): string[] {
  if (typeof data.mentions !== 'string') return [];
  try {
    const mentions = JSON.parse(data.mentions) as unknown;
    return Array.isArray(mentions) ? mentions.filter((id): id is string => typeof id === 'string') : [];
  } catch {
    return [];
  }
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
