import type { Post } from '@mattermost/types/posts';
import type { Logger } from 'pino';
import type { Directory } from './directory';
import type { MattermostApi } from './mattermost-api';

/** Named limits of a catch-up (adapters/README.md: every limit a named default). */
export const CATCH_UP_LIMITS = {
  /** Asks from this long before each channel's position (clocks and in-flight posts; duplicates are recognised). */
  marginMs: 5000,
  /** Posts older than this are not caught up (a hub down for days does not answer last week's questions). */
  maxAgeMs: 24 * 60 * 60 * 1000,
  /** At most this many posts a channel are taken in by one catch-up: the newest (the rest is logged). */
  maxPostsPerChannel: 200,
} as const;

/**
 * The posts made while the channel did not hear them (the socket was away, or the whole hub was
 * down): for every channel of the bot in its served teams (direct messages included),
 * `GET /api/v4/channels/{id}/posts?since=<ms>` from shortly before that channel's position (`since`),
 * keeping the posts created since then (an edit of an older post is not a new post), oldest first.
 * Posts seen already are in it too: the hub recognises them by their id (externalId) and answers
 * nothing twice.
 */
export async function catchUp(
  api: MattermostApi,
  directory: Directory,
  since: (channelId: string) => number,
  logger: Logger,
  /** Never older than this (when the channel first listened): history from before is not answered. */
  floor = 0,
): Promise<Post[]> {
  const channelIds = new Set<string>();
  for (const teamId of directory.teamIds) {
    const channels = await api.myChannels(teamId).catch((error: unknown) => {
      logger.warn({ err: error, team_id: teamId }, 'mattermost: could not list the channels to catch up on');
      return [];
    });
    for (const channel of channels) channelIds.add(channel.id);
  }
  const oldest = Math.max(Date.now() - CATCH_UP_LIMITS.maxAgeMs, floor);
  const posts: Post[] = [];
  for (const channelId of channelIds) {
    const from = Math.max(since(channelId) - CATCH_UP_LIMITS.marginMs, oldest);
    const list = await api.postsSince(channelId, from).catch((error: unknown) => {
      logger.warn({ err: error, channel_id: channelId }, 'mattermost: could not catch up on a channel');
      return null;
    });
    if (list)
      posts.push(
        ...newest(
          Object.values(list.posts).filter((post) => post.create_at >= from && !post.delete_at),
          channelId,
          logger,
        ),
      );
  }
  posts.sort((a, b) => a.create_at - b.create_at);
  if (posts.length > 0) logger.info({ posts: posts.length, channels: channelIds.size }, 'mattermost: caught up on posts made while not listening');
  return posts;
}

/** The newest `maxPostsPerChannel` of a channel's missed posts. */
function newest(posts: Post[], channelId: string, logger: Logger): Post[] {
  if (posts.length <= CATCH_UP_LIMITS.maxPostsPerChannel) return posts;
  posts.sort((a, b) => b.create_at - a.create_at);
  logger.warn(
    { channel_id: channelId, skipped: posts.length - CATCH_UP_LIMITS.maxPostsPerChannel },
    'mattermost: too many missed posts in a channel; only the newest are taken in',
  );
  return posts.slice(0, CATCH_UP_LIMITS.maxPostsPerChannel);
}
