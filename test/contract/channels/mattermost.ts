import { APOLOGY_TEXT } from '../../../adapters/mattermost/reply-text';
import { startMattermostHarness, waitForBotPost, waitForButtons } from '../../adapters/mattermost/mattermost-harness';
import { request } from '../../helpers/http';
import type { ChannelUnderTest, Conversation } from './channel-under-test';

/** Mattermost: `posted` events over the fake server's WebSocket in, Client4 posts and edits out; a DM per conversation. */
export async function startMattermost(): Promise<ChannelUnderTest> {
  const h = await startMattermostHarness();
  let conversations = 0;

  const conversation = async (): Promise<Conversation> => {
    conversations += 1;
    const user = h.mattermost.addUser({ id: `contract${String(conversations).padStart(18, '0')}`, username: `person${conversations}`, first_name: 'Person' });
    const dm = h.mattermost.directChannel(user.id as string);
    const key = `mattermost::${dm}`;
    return {
      expectedKey: key,
      expectedBinding: `mattermost:${dm}`,
      sessionId: async () => {
        const sessions = await request(`${h.api}/sessions?limit=100`, { headers: { authorization: `Bearer ${h.adminToken}` } });
        return sessions.body.data.items.find((item: any) => item.session_key === key).id;
      },
      send: async (text) => {
        const typed = () => h.mattermost.typing.filter((typing) => typing.channel_id === dm).length;
        const before = typed();
        const post = h.mattermost.userPosts(user.id as string, dm, text);
        // The socket has no acknowledgement: the post was taken in once its turn shows the bot typing.
        await h.mattermost.waitFor(() => typed() > before, 10_000);
        // A server replaying its event queue to a reconnected client sends the same `posted` event again.
        return { redeliver: async () => h.mattermost.repost(post.id) };
      },
      showsWorking: async (prefix) => {
        await h.mattermost.waitFor(() => h.mattermost.writtenIn(dm).some((text) => text.startsWith(prefix)), 10_000);
      },
      showsAnswer: async (text) => void (await waitForBotPost(h.mattermost, dm, text)),
      confirmation: async () => {
        const asked = await waitForButtons(h.mattermost, dm);
        const actions = asked.props.attachments[0].actions as any[];
        return {
          offered: actions.map((action) => action.integration.context.action),
          answer: async (action) => {
            const button = actions.find((candidate) => candidate.integration.context.action === action);
            const clicked = await h.mattermost.click(asked.id, button.id, user.id as string);
            if (clicked.status !== 200) throw new Error(`Mattermost click refused: ${clicked.status}`);
          },
        };
      },
      failureShown: async () => (await waitForBotPost(h.mattermost, dm, APOLOGY_TEXT)).message,
      shown: () => h.mattermost.writtenIn(dm),
    };
  };

  return { name: 'mattermost', provider: h.provider, tools: h.tools, api: h.api, adminToken: h.adminToken, conversation, stop: () => h.stop() };
}
