import { request } from '../../helpers/http';
import { freePort } from '../../helpers/redis-server';
import { registerUser } from '../../helpers/users';
import { removeTempDirs } from '../../helpers/temp-dir';
import { BOT_TOKEN, startMattermostHarness, waitForBotPost, type MattermostHarness } from './mattermost-harness';

/** A channel that cannot work never takes the hub down: failed with Mattermost's reason, retried with backoff (decisions.md, "A channel that fails"). */
afterAll(() => removeTempDirs());

const status = async (h: MattermostHarness) => {
  const admin = { authorization: `Bearer ${h.adminToken}` };
  const channels = (await request(`${h.api}/admin/channels`, { headers: admin })).body.data as any[];
  return channels.find((channel) => channel.name === 'mattermost');
};

async function waitForStatus(h: MattermostHarness, wanted: string, timeoutMs = 15_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const current = await status(h);
    if (current.status === wanted) return current;
    if (Date.now() > deadline) throw new Error(`mattermost stayed ${current.status}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

it('a wrong token: failed with the reason (never the token), readiness stays 200, and once the token is accepted it runs and answers', async () => {
  const h = await startMattermostHarness({ token: 'a-wrong-token-never-logged' });
  try {
    const failed = await waitForStatus(h, 'failed');
    expect(failed).toMatchObject({ enabled: true, mode: 'websocket', status: 'failed' });
    expect(failed.error).toContain('Invalid or expired session');
    expect(failed.next_retry_at).not.toBeNull();
    const ready = await request(`${h.api}/health/ready`);
    expect(ready.status).toBe(200);
    expect(ready.body.data.channels.mattermost).toMatchObject({ status: 'failed', mode: 'websocket' });
    expect(h.logs.text).not.toContain('a-wrong-token-never-logged');
    expect(h.logs.text).not.toContain(BOT_TOKEN);
    // The web channel and the API serve meanwhile.
    expect((await registerUser(h.api, 'someone')).token).toBeTruthy();

    // The token is fixed on the Mattermost side (the bot's token is what the server now accepts): the next retry runs.
    h.mattermost.token = 'a-wrong-token-never-logged';
    await waitForStatus(h, 'running', 20_000);
    const dm = h.mattermost.directChannel('user00000000000000000000001');
    h.mattermost.userPosts('user00000000000000000000001', dm, 'are you back?');
    await waitForBotPost(h.mattermost, dm, 'Hello there, friend.');
  } finally {
    await h.stop();
  }
}, 40_000);

it('an unreachable server: failed with the reason, retried, the hub serving', async () => {
  const port = await freePort();
  const h = await startMattermostHarness({ url: `http://127.0.0.1:${port}` });
  try {
    const failed = await waitForStatus(h, 'failed');
    expect(failed.error).toMatch(/users\/me failed/);
    expect((await request(`${h.api}/health/ready`)).status).toBe(200);
  } finally {
    await h.stop();
  }
}, 30_000);

it('the server goes away after the start: reconnects fail, the channel reports failed, and recovers when the server is back', async () => {
  const h = await startMattermostHarness();
  try {
    await waitForStatus(h, 'running');
    h.mattermost.token = 'rotated-elsewhere'; // the bot's token no longer works: every reconnect is refused
    h.mattermost.dropSockets();
    const failed = await waitForStatus(h, 'failed');
    expect(failed.error).toMatch(/event socket|expired session/);
    // A post made while the channel is down: no socket hears it.
    const dm = h.mattermost.directChannel('user00000000000000000000001');
    h.mattermost.userPostsUnheard('user00000000000000000000001', dm, 'made while you were down');
    h.mattermost.token = BOT_TOKEN;
    await waitForStatus(h, 'running', 20_000);
    // Started again, it catches up on that post and answers it (with a send budget not the one abandoned at the stop).
    await waitForBotPost(h.mattermost, dm, 'Hello there, friend.');
    h.provider.pieces = ['Still', ' here.'];
    h.mattermost.userPosts('user00000000000000000000001', dm, 'still there?');
    await waitForBotPost(h.mattermost, dm, 'Still here.');
    expect(h.mattermost.botPosts(dm).map((post) => post.message)).toEqual(['Hello there, friend.', 'Still here.']);
  } finally {
    await h.stop();
  }
}, 40_000);
