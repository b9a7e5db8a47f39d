import type { Post } from '@mattermost/types/posts';
import type { Logger } from 'pino';
import type { Directory } from './directory';
import type { MattermostApi } from './mattermost-api';

/**
 * The posts made while the event socket was away: for every channel of the bot in its served teams
 * (direct messages included), `GET /api/v4/channels/{id}/posts?since=<ms>`, keeping the posts
 * created since then (an edit of an older post is not a new post), oldest first. Posts seen already
 * are in it too: the hub recognises them by their id (externalId) and answers nothing twice.
 */
export async function catchUp(api: MattermostApi, directory: Directory, since: number, logger: Logger): Promise<Post[]> {
  const channelIds = new Set<string>();
  for (const teamId of directory.teamIds) {
    const channels = await api.myChannels(teamId).catch((error: unknown) => {
      logger.warn({ err: error, team_id: teamId }, 'mattermost: could not list the channels to catch up on');
      return [];
    });
    for (const channel of channels) channelIds.add(channel.id);
  }
  const posts: Post[] = [];
  for (const channelId of channelIds) {
    const list = await api.postsSince(channelId, since).catch((error: unknown) => {
      logger.warn({ err: error, channel_id: channelId }, 'mattermost: could not catch up on a channel');
      return null;
    });
    if (list) posts.push(...Object.values(list.posts).filter((post) => post.create_at >= since && !post.delete_at));
  }
  posts.sort((a, b) => a.create_at - b.create_at);
  if (posts.length > 0) logger.info({ posts: posts.length, channels: channelIds.size }, 'mattermost: caught up on posts made while disconnected');
  return posts;
}
