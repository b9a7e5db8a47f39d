import { request } from '../../helpers/http';
import { removeTempDirs } from '../../helpers/temp-dir';
import { botMessages, startMattermostHarness, waitForBotPost, waitForButtons, type MattermostHarness } from './mattermost-harness';

const ADA = 'user00000000000000000000001';
const ANSWER = 'Hello there, friend.';

describe('the Mattermost channel against a fake Mattermost server', () => {
  let h: MattermostHarness;
  const admin = () => ({ authorization: `Bearer ${h.adminToken}` });
  const sessionByKey = async (key: string) =>
    ((await request(`${h.api}/sessions?limit=100`, { headers: admin() })).body.data.items as any[]).find((item) => item.session_key === key);

  beforeAll(async () => {
    h = await startMattermostHarness();
  }, 30_000);

  afterAll(async () => {
    await h?.stop();
    removeTempDirs();
  });

  beforeEach(() => {
    h.provider.pieces = ['Hello', ' there', ', friend', '.'];
    h.provider.rounds = [];
    h.provider.pauseBefore = null;
    h.tools.runs.length = 0;
  });

  it('answers a DM with one post streamed by edits, in a session keyed by the DM, the sender a contact', async () => {
    const dm = h.mattermost.directChannel(ADA);
    h.provider.pauseBefore = 2;
    h.mattermost.userPosts(ADA, dm, 'hello bot');
    await h.provider.paused();
    // Under way: the one post already shows the beginning of the answer, and the bot is typing.
    await waitForBotPost(h.mattermost, dm, 'Hello there');
    expect(h.mattermost.typing.some((typing) => typing.channel_id === dm && typing.parent_id === '')).toBe(true);
    h.provider.pauseBefore = null;
    h.provider.release();
    await waitForBotPost(h.mattermost, dm, ANSWER);
    expect(botMessages(h.mattermost, dm)).toEqual([ANSWER]); // one post, edited — not a post per update
    const post = h.mattermost.botPosts(dm)[0]!;
    const patches = h.mattermost.calls.filter((call) => call.method === 'PUT' && call.path === `/api/v4/posts/${post.id}/patch`);
    expect(patches.length).toBeGreaterThanOrEqual(1);
    expect(post.root_id).toBe('');

    const session = await sessionByKey(`mattermost::${dm}`);
    expect(session).toMatchObject({ channel: 'mattermost' });
    const contacts = await request(`${h.api}/assistant/contacts?limit=100`, { headers: admin() });
    const contact = (contacts.body.data.items as any[]).find((item) => item.session_key === `mattermost::${dm}`);
    expect(contact).toMatchObject({ display_name: 'Ada Lovelace', tags: expect.arrayContaining(['position:sre']) });
  });

  it('answers a mention in a channel in a thread under it; a reply in that thread needs no mention; other posts are ignored', async () => {
    const channel = h.mattermost.openChannel('town-square');
    h.mattermost.userPosts(ADA, channel, 'just chatting, no bot here');
    const mention = h.mattermost.userPosts(ADA, channel, '@switchboard hello from the channel');
    const answer = await waitForBotPost(h.mattermost, channel, ANSWER);
    expect(answer.root_id).toBe(mention.id);
    const session = await sessionByKey(`mattermost::${channel}:${mention.id}`);
    expect(session).toBeDefined();
    const history = await request(`${h.api}/sessions/${session.id}/messages`, { headers: admin() });
    expect(history.body.data.items[0].content).toBe('hello from the channel');
    const contacts = await request(`${h.api}/assistant/contacts?limit=100`, { headers: admin() });
    const contact = (contacts.body.data.items as any[]).find((item) => item.session_key === `mattermost::${channel}:${mention.id}`);
    expect(contact.tags).toEqual(expect.arrayContaining(['team:ops']));

    h.provider.pieces = ['Again', '.'];
    h.mattermost.userPosts(ADA, channel, 'and a follow-up', mention.id);
    await waitForBotPost(h.mattermost, channel, 'Again.');
    expect(botMessages(h.mattermost, channel, mention.id)).toEqual([ANSWER, 'Again.']);
    expect(h.provider.requests.length).toBeGreaterThan(0);
    const turns = await request(`${h.api}/sessions/${session.id}/messages`, { headers: admin() });
    expect(turns.body.data.items.map((message: any) => message.content)).toEqual(['hello from the channel', ANSWER, 'and a follow-up', 'Again.']);
  });

  it('asks a confirmation with six buttons; a click runs the tool, answers, and the clicked post shows the decision', async () => {
    const dm = h.mattermost.directChannel(ADA);
    h.provider.rounds = [
      { calls: [{ id: 'call-mm', name: 'save_note', arguments: JSON.stringify({ text: 'from mattermost' }) }] },
      { text: ['Saved', ' it.'] },
    ];
    h.mattermost.userPosts(ADA, dm, 'save a note please');
    const asked = await waitForButtons(h.mattermost, dm);
    const actions = asked.props.attachments[0].actions as any[];
    expect(actions.map((action) => action.integration.context.action)).toEqual(['allow', 'deny', 'allow_all', 'disable', 'forbid_all', 'cancel']);
    expect(h.tools.runs).toEqual([]);

    // A context whose secret was tampered with is refused, and nothing runs.
    const forged = { ...actions[0].integration.context, action: 'allow_all' };
    const refused = await request(actions[0].integration.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ user_id: ADA, post_id: asked.id, context: forged }),
    });
    expect(refused.status).toBe(401);

    const clicked = await h.mattermost.click(asked.id, actions[0].id, ADA);
    expect(clicked.status).toBe(200);
    await waitForBotPost(h.mattermost, dm, 'Saved it.');
    expect(h.tools.runs).toEqual([{ tool: 'save_note', input: { text: 'from mattermost' } }]);
    const updated = h.mattermost.posts.get(asked.id)!;
    expect(updated.props.attachments[0].actions).toBeUndefined();
    expect(updated.props.attachments[0].text).toContain('Allow once');
    expect(updated.props.attachments[0].text).toContain('@ada');

    // A second click on the answered confirmation is told it is no longer pending.
    const again = await h.mattermost.click(asked.id, actions[0].id, ADA).catch(() => null);
    expect(again).toBeNull(); // the buttons are gone from the post: nothing left to click
  });

  it('reconnects after the server drops the socket and catches up: nothing lost, nothing answered twice', async () => {
    const grace = h.mattermost.addUser({ id: 'user00000000000000000000002', username: 'grace', first_name: 'Grace' }).id as string;
    const dm = h.mattermost.directChannel(grace);
    h.mattermost.userPosts(grace, dm, 'before the drop');
    await waitForBotPost(h.mattermost, dm, ANSWER);
    const answersBefore = botMessages(h.mattermost, dm).length;
    const connections = h.mattermost.connections;
    h.mattermost.dropSockets();
    h.provider.pieces = ['Caught', ' up.'];
    h.mattermost.userPostsUnheard(grace, dm, 'while disconnected');
    await h.mattermost.waitFor(() => h.mattermost.connections > connections && h.mattermost.openSockets > 0, 10_000);
    await waitForBotPost(h.mattermost, dm, 'Caught up.');
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(botMessages(h.mattermost, dm).slice(answersBefore)).toEqual(['Caught up.']);
    const session = await sessionByKey(`mattermost::${dm}`);
    const history = await request(`${h.api}/sessions/${session.id}/messages?limit=100`, { headers: admin() });
    const contents = (history.body.data.items as any[]).map((message) => message.content);
    expect(contents.filter((content) => content === 'before the drop')).toHaveLength(1);
    expect(contents.filter((content) => content === 'while disconnected')).toHaveLength(1);

    // The socket works again: a new post is heard live.
    h.provider.pieces = ['Live', '.'];
    h.mattermost.userPosts(grace, dm, 'after the reconnect');
    await waitForBotPost(h.mattermost, dm, 'Live.');
  });
});
