import type { EditCapability, ReplySurface, WorkStatus } from '../shared/reply-surface';
import { confirmationProps } from './confirm-buttons';
import { MattermostCallError, type MattermostApi } from './mattermost-api';
import { APOLOGY_TEXT, CANCELLED_TEXT, MAX_POST_CHARS, mattermostText, STILL_ANSWERING_TEXT, WAITING_EMOJI } from './reply-text';

/** The Mattermost calls a reply makes (MattermostApi: posts and edits through the bot's send budget). */
export type PostCalls = Pick<MattermostApi, 'send' | 'trySend' | 'react'>;

export interface PostSurfaceOptions {
  api: PostCalls;
  /** "The bot is typing" over the event socket. */
  typing(channelId: string, parentId: string): void;
  botUserId: string;
  channelId: string;
  /** The thread the reply goes in ('' at the top level of a DM). */
  rootId: string;
  /** The person's post: a waiting one gets the reaction. */
  postId: string;
  editIntervalMs: number;
  typingIntervalMs: number;
  /** Confirmation buttons: the key signing their contexts and where Mattermost posts a click; null: asked as text. */
  buttons: { key: Buffer; actionsUrl: string } | null;
}

/**
 * A Mattermost DM or thread as a reply surface for one post (the shared presenter shows the turn):
 * the answer is one post created at the first token and edited (`PUT /posts/{id}/patch`) at the
 * channel's cadence, split past 16,383 characters; `user_typing` while the agent works (never after
 * the answer); confirmations as interactive buttons; ⏳ on a post waiting for its turn. Every post and
 * edit spends the bot's send budget (MattermostApi). A failed turn's apology replaces what streamed.
 */
export function postSurface(options: PostSurfaceOptions): ReplySurface {
  const { api, channelId, rootId } = options;
  const where = { channel_id: channelId, ...(rootId ? { root_id: rootId } : {}) };
  let typing: NodeJS.Timeout | null = null;
  const typingOff = () => {
    if (typing) clearInterval(typing);
    typing = null;
  };
  const status = (work: WorkStatus): Promise<void> => {
    switch (work.kind) {
      case 'working':
      case 'tool':
        if (!typing) {
          options.typing(channelId, rootId);
          typing = setInterval(() => options.typing(channelId, rootId), options.typingIntervalMs);
          typing.unref();
        }
        break;
      case 'confirm':
      case 'answering':
      case 'idle':
        typingOff();
        break;
      default:
        work satisfies never;
    }
    return Promise.resolve();
  };
  const { buttons } = options;
  return {
    cadence: {
      editIntervalMs: options.editIntervalMs,
      maxMessageChars: MAX_POST_CHARS,
      failureNote: 'replace',
      emptyText: '…',
      texts: { apology: APOLOGY_TEXT, cancelled: CANCELLED_TEXT, busy: STILL_ANSWERING_TEXT },
    },
    post: async (text) => void (await api.send({ ...where, message: mattermostText(text) })),
    edit: editPosts(api, where),
    status,
    ...(buttons
      ? {
          ask: async (request, sessionId) =>
            void (await api.send({ ...where, message: '', props: confirmationProps(buttons.key, buttons.actionsUrl, sessionId, request) })),
        }
      : {}),
    react: (waiting) => api.react(options.botUserId, options.postId, WAITING_EMOJI, waiting),
  };
}

/** The streamed post: created once, then edited; a post deleted meanwhile (404) gets the answer as a new post. */
function editPosts(api: PostCalls, where: { channel_id: string; root_id?: string }): EditCapability {
  return {
    open: async (text, { interim }) => {
      const write = { ...where, message: mattermostText(text) };
      const post = interim ? await api.trySend(write) : await api.send(write);
      return post?.id ?? null;
    },
    change: async (id, text, { interim }) => {
      const write = { ...where, message: mattermostText(text) };
      if (interim) return (await api.trySend(write, id)) !== null;
      try {
        await api.send(write, id);
      } catch (error) {
        if (!(error instanceof MattermostCallError) || error.status !== 404) throw error;
        await api.send(write);
      }
      return true;
    },
  };
}
