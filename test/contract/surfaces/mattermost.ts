import type { Post } from '@mattermost/types/posts';
import { actionKey } from '../../../adapters/mattermost/confirm-buttons';
import { postSurface, type PostCalls } from '../../../adapters/mattermost/post-surface';
import type { SurfaceHarness } from './reply-surface-contract';

/**
 * Mattermost's reply surface over a recording of the posts and edits it makes (the PostCalls port
 * MattermostApi implements): posts as the channel shows them (edited ones with their current
 * text), typing, and the confirmation's buttons.
 */
export const mattermostSurfaces: SurfaceHarness = {
  name: 'mattermost',
  conversation() {
    const posts: { id: string; message: string; props?: Record<string, any> }[] = [];
    let typed = false;
    let next = 1;
    const write = async (body: { message?: string; props?: Record<string, unknown> }, postId?: string): Promise<Post> => {
      if (postId) {
        const post = posts.find((candidate) => candidate.id === postId)!;
        post.message = body.message ?? post.message;
      } else posts.push({ id: `p${next++}`, message: body.message ?? '', props: body.props });
      return { id: postId ?? posts.at(-1)!.id } as Post;
    };
    const calls: PostCalls = { send: write, trySend: write, react: async () => undefined };
    const surface = postSurface({
      api: calls,
      typing: () => void (typed = true),
      botUserId: 'bot',
      channelId: 'dm1',
      rootId: '',
      postId: 'question',
      editIntervalMs: 20,
      typingIntervalMs: 1000,
      buttons: { key: actionKey('token'), actionsUrl: 'http://hub.test/api/v1/channels/mattermost/actions' },
    });
    return {
      surface,
      // A post reads as its message, or as its attachment (a confirmation: title and text).
      shown: () =>
        posts
          .map(
            (post) =>
              post.message || ((post.props?.attachments ?? []) as any[]).map((attachment) => `${attachment.title ?? ''}\n${attachment.text ?? ''}`).join('\n'),
          )
          .filter((text) => text !== ''),
      offered: () => {
        const asked = [...posts].reverse().find((post) => post.props?.attachments);
        return asked ? asked.props!.attachments[0].actions.map((action: any) => action.integration.context.action) : null;
      },
      showedWork: () => typed,
    };
  },
};
