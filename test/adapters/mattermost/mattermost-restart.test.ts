import { createTestPostgresDatabase } from '../../helpers/postgres';
import { removeTempDirs } from '../../helpers/temp-dir';
import { PgChaosProxy } from '../../reliability/support/chaos-proxy';
import { botMessages, startMattermostHarness, waitForBotPost } from './mattermost-harness';

/**
 * Posts the hub did not hear: made while the whole hub was down (caught up from the positions it
 * keeps in its database, answered once across restarts), and a post whose ingest failed because the
 * database was away (tried again with backoff, without waiting for a reconnect).
 */
const ADA = 'user00000000000000000000001';
const ANSWER = 'Hello there, friend.';
let mentionId = '';

afterAll(() => removeTempDirs());

it('posts made while the hub was stopped are answered once when it starts again, never again after another restart; history from before its first start is not', async () => {
  let dm = '';
  const h = await startMattermostHarness({
    beforeStart: (mattermost) => {
      dm = mattermost.directChannel(ADA);
      mattermost.userPostsUnheard(ADA, dm, 'made before the hub ever ran');
    },
  });
  try {
    const ops = h.mattermost.openChannel('ops-room');
    h.mattermost.userPosts(ADA, dm, 'hello bot');
    await waitForBotPost(h.mattermost, dm, ANSWER);

    await h.restartHub(() => {
      // The hub is down: no socket hears these.
      h.mattermost.userPostsUnheard(ADA, dm, 'are you there?');
      h.mattermost.userPostsUnheard(ADA, ops, 'just chatting among ourselves');
      const mention = h.mattermost.userPostsUnheard(ADA, ops, '@switchboard did the deploy finish?');
      h.mattermost.userPostsUnheard(ADA, dm, 'and one more');
      mentionId = mention.id;
    });
    await h.mattermost.waitFor(() => botMessages(h.mattermost, dm).length === 3 && botMessages(h.mattermost, ops).includes(ANSWER), 20_000);
    expect(h.mattermost.botPosts(ops).map((post) => [post.root_id, post.message])).toEqual([[mentionId, ANSWER]]);

    // Stopped and started again with nothing new: what was answered is not answered again.
    await h.restartHub();
    h.provider.pieces = ['Still', ' here.'];
    h.mattermost.userPosts(ADA, dm, 'still there?');
    await waitForBotPost(h.mattermost, dm, 'Still here.');
    expect(botMessages(h.mattermost, dm)).toEqual([ANSWER, ANSWER, ANSWER, 'Still here.']);
    expect(botMessages(h.mattermost, ops)).toEqual([ANSWER]);
  } finally {
    await h.stop();
  }
}, 60_000);

it('a post whose ingest fails (PostgreSQL cut away) is tried again with backoff and answered once, without a reconnect or a catch-up', async () => {
  const database = await createTestPostgresDatabase();
  const target = new URL(database.url);
  const proxy = new PgChaosProxy({ host: target.hostname, port: Number(target.port || 5432) });
  target.host = `127.0.0.1:${await proxy.start()}`;
  const h = await startMattermostHarness({ env: { SERVICE_DATABASE_URL: target.toString() } });
  try {
    const dm = h.mattermost.directChannel(ADA);
    h.mattermost.userPosts(ADA, dm, 'hello bot');
    await waitForBotPost(h.mattermost, dm, ANSWER);
    const connections = h.mattermost.connections;
    const catchUps = () => h.mattermost.calls.filter((call) => call.method === 'GET' && /^\/api\/v4\/channels\/[^/]+\/posts$/.test(call.path)).length;
    const before = catchUps();

    await proxy.cut();
    h.provider.pieces = ['Back', ' again.'];
    h.mattermost.userPosts(ADA, dm, 'heard while the database is away');
    await h.mattermost.waitFor(() => h.logs.text.includes('a post could not be taken in; trying again'), 10_000);
    expect(botMessages(h.mattermost, dm)).toEqual([ANSWER]);
    await proxy.restore();

    await waitForBotPost(h.mattermost, dm, 'Back again.', 20_000);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(botMessages(h.mattermost, dm)).toEqual([ANSWER, 'Back again.']);
    expect(h.mattermost.connections).toBe(connections); // the socket never dropped …
    expect(catchUps()).toBe(before); // … and no catch-up found it: the retry did
  } finally {
    await h.stop();
    await proxy.stop();
    await database.drop();
  }
}, 60_000);
