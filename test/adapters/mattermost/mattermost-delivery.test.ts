import { request } from '../../helpers/http';
import { removeTempDirs } from '../../helpers/temp-dir';
import { botMessages, startMattermostHarness, waitForBotPost, type MattermostHarness } from './mattermost-harness';

/** How the channel delivers: long answers split, Mattermost's rate limit honoured, waiting posts edited and deleted, the teams filter. */
describe('Mattermost delivery', () => {
  let h: MattermostHarness;
  let users = 0;
  const admin = () => ({ authorization: `Bearer ${h.adminToken}` });
  const newDm = () => {
    users += 1;
    const user = h.mattermost.addUser({ id: `delivery${String(users).padStart(18, '0')}`, username: `user${users}`, first_name: 'User' }).id as string;
    return { user, dm: h.mattermost.directChannel(user) };
  };
  const history = async (key: string) => {
    const sessions = (await request(`${h.api}/sessions?limit=100`, { headers: admin() })).body.data.items as any[];
    const session = sessions.find((item) => item.session_key === key);
    return ((await request(`${h.api}/sessions/${session.id}/messages?limit=100`, { headers: admin() })).body.data.items as any[]).map(
      (message) => `${message.role}: ${message.content}`,
    );
  };

  beforeAll(async () => {
    h = await startMattermostHarness({ settings: { teams: ['ops'] } });
  }, 30_000);

  afterAll(async () => {
    await h?.stop();
    removeTempDirs();
  });

  beforeEach(() => {
    h.provider.pieces = ['Hello', ' there', ', friend', '.'];
    h.provider.pauseBefore = null;
    h.mattermost.rateLimit = null;
  });

  it('splits an answer longer than 16,383 characters over several posts, in order', async () => {
    const { user, dm } = newDm();
    const paragraph = 'word '.repeat(999).trim(); // 4,994 characters
    h.provider.pieces = Array.from({ length: 5 }, (_, index) => `${index === 0 ? '' : '\n\n'}${paragraph}`);
    h.mattermost.userPosts(user, dm, 'a long one please');
    await h.mattermost.waitFor(() => botMessages(h.mattermost, dm).length === 2 && botMessages(h.mattermost, dm).every((text) => !text.endsWith('…')), 15_000);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const posts = botMessages(h.mattermost, dm);
    expect(posts).toHaveLength(2);
    for (const post of posts) expect(post.length).toBeLessThanOrEqual(16_383);
    expect(posts.join('\n\n')).toBe(h.provider.pieces.join(''));
  });

  it('honours a 429: the write pauses for Retry-After and goes again, and the answer arrives whole', async () => {
    const { user, dm } = newDm();
    h.mattermost.throttleNext = 0;
    const before = h.mattermost.calls.length;
    h.provider.pauseBefore = 1;
    h.mattermost.userPosts(user, dm, 'through a rate limit');
    await h.provider.paused();
    h.mattermost.throttleNext = 1; // the next REST call is refused with 429 and Retry-After: 1
    h.provider.release();
    await waitForBotPost(h.mattermost, dm, 'Hello there, friend.', 15_000);
    const calls = h.mattermost.calls.slice(before);
    const refused = calls.findIndex((call) => call.status === 429);
    expect(refused).toBeGreaterThanOrEqual(0);
    const nextWrite = calls.slice(refused + 1).find((call) => call.path.startsWith('/api/v4/posts') && call.method !== 'GET');
    expect(nextWrite).toBeDefined();
    // Retry-After is 1 s: no write went out before it passed.
    expect(nextWrite!.at - calls[refused]!.at).toBeGreaterThanOrEqual(900);
    expect(botMessages(h.mattermost, dm)).toEqual(['Hello there, friend.']);
  });

  it('under a tight server limit (X-Ratelimit-Remaining runs out, 429s) a burst of conversations is answered whole', async () => {
    const chats = [newDm(), newDm(), newDm(), newDm()];
    h.provider.pieces = ['One', ' two', ' three', ' four', ' five', '.'];
    h.mattermost.rateLimit = { perSecond: 4 };
    const before = h.mattermost.calls.length;
    for (const { user, dm } of chats) h.mattermost.userPosts(user, dm, 'count to five');
    for (const { dm } of chats) await waitForBotPost(h.mattermost, dm, 'One two three four five.', 30_000);
    for (const { dm } of chats) expect(botMessages(h.mattermost, dm)).toEqual(['One two three four five.']);
    // The server's limit was reached (reads and writes alike are paced by X-Ratelimit-Remaining/Reset and
    // Retry-After), and no post was lost for it: every conversation answered exactly once.
    const limited = h.mattermost.calls.slice(before).filter((call) => call.status === 429 || call.remaining === 0);
    expect(limited.length).toBeGreaterThan(0);
  }, 40_000);

  it('an edited waiting post is answered as edited; a deleted one is not answered; ⏳ marks a post while it waits', async () => {
    const { user, dm } = newDm();
    h.provider.pauseBefore = 1;
    h.mattermost.userPosts(user, dm, 'first');
    await h.provider.paused();
    const second = h.mattermost.userPosts(user, dm, 'second, before the edit');
    const third = h.mattermost.userPosts(user, dm, 'third, to be deleted');
    await h.mattermost.waitFor(
      () => h.mattermost.reactions.has(`${second.id}:hourglass_flowing_sand`) && h.mattermost.reactions.has(`${third.id}:hourglass_flowing_sand`),
    );
    h.mattermost.userEdits(second.id, 'second, as edited');
    h.mattermost.userDeletes(third.id);
    await new Promise((resolve) => setTimeout(resolve, 300));
    h.provider.pauseBefore = null;
    h.provider.release();
    await h.mattermost.waitFor(() => botMessages(h.mattermost, dm).length === 2 && botMessages(h.mattermost, dm)[1] === 'Hello there, friend.', 10_000);
    await new Promise((resolve) => setTimeout(resolve, 300));
    // History is oldest first by when each message arrived: the edited one keeps its place.
    expect(await history(`mattermost::${dm}`)).toEqual([
      'user: first',
      'user: second, as edited',
      'assistant: Hello there, friend.',
      'assistant: Hello there, friend.',
    ]);
    expect(h.provider.requests.at(-1)!.messages.at(-1)).toMatchObject({ content: 'second, as edited' });
    expect(h.mattermost.reactions.has(`${second.id}:hourglass_flowing_sand`)).toBe(false);
  });

  it('answers mentions only in the teams it is told to serve (DMs always)', async () => {
    const elsewhere = h.mattermost.openChannel('other-team-channel', 'team00000000000000000000099');
    const { user } = newDm();
    h.mattermost.userPosts(user, elsewhere, '@switchboard are you there?');
    const served = h.mattermost.openChannel('ops-channel');
    h.mattermost.userPosts(user, served, '@switchboard and here?');
    await waitForBotPost(h.mattermost, served, 'Hello there, friend.');
    expect(botMessages(h.mattermost, elsewhere)).toEqual([]);
  });
});
