import { createHmac, randomBytes } from 'node:crypto';
import { startService, type RunningService } from '../../../src/main';
import { FAKE_SLACK, FakeSlackApi } from '../../fakes/slack-api';
import { ScriptedProvider } from '../../fakes/scripted-provider';
import { GENEROUS_RATE_LIMITS } from '../../helpers/auth-service';
import { testEnv } from '../../helpers/env';
import { request } from '../../helpers/http';
import { LogCapture } from '../../helpers/log-capture';
import { makeTempDir, removeTempDirs } from '../../helpers/temp-dir';
import { registerUser, type TestUser } from '../../helpers/users';

/**
 * A Slack channel whose token Slack refuses: the hub starts and serves, the channel is failed (in
 * readiness and GET /admin/channels) and refuses events with 503 so Slack delivers them again;
 * once Slack accepts the token, a retry brings it up and events are taken in.
 */
const SIGNING_SECRET = randomBytes(16).toString('hex');
const BOT_TOKEN = `xoxb-${randomBytes(8).toString('hex')}`;
const APP_TOKEN = `xapp-${randomBytes(8).toString('hex')}`;

let slack: FakeSlackApi;
let service: RunningService;
let logs: LogCapture;
let base: string;
let admin: TestUser;

beforeAll(async () => {
  slack = new FakeSlackApi();
  await slack.start();
  slack.refusedTokens.add(BOT_TOKEN);
  logs = new LogCapture();
  service = await startService({
    env: testEnv(makeTempDir(), {
      ...GENEROUS_RATE_LIMITS,
      SERVICE_SLACK_BOT_TOKEN: BOT_TOKEN,
      SERVICE_SLACK_SIGNING_SECRET: SIGNING_SECRET,
      SERVICE_SLACK_API_URL: slack.url,
    }),
    cwd: makeTempDir(),
    logDestination: logs,
    provider: new ScriptedProvider(),
  });
  base = `http://127.0.0.1:${service.port}/api/v1`;
  admin = await registerUser(base, 'root');
});

afterAll(async () => {
  await service?.stop();
  await slack?.stop();
  removeTempDirs();
});

function signedEvent(text: string) {
  const body = JSON.stringify({
    token: 'legacy',
    team_id: FAKE_SLACK.teamId,
    api_app_id: 'A1',
    type: 'event_callback',
    event_id: `Ev-${randomBytes(4).toString('hex')}`,
    event_time: Math.floor(Date.now() / 1000),
    event: { type: 'message', channel_type: 'im', channel: 'D1', user: 'U1', text, ts: `1710000000.${Date.now() % 1_000_000}`, team: FAKE_SLACK.teamId },
  });
  const timestamp = Math.floor(Date.now() / 1000);
  const signature = `v0=${createHmac('sha256', SIGNING_SECRET).update(`v0:${timestamp}:${body}`).digest('hex')}`;
  return request(`${base}/channels/slack/events`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-slack-request-timestamp': String(timestamp), 'x-slack-signature': signature },
    body,
  });
}

const channelsAsAdmin = async () => (await request(`${base}/admin/channels`, { headers: { authorization: `Bearer ${admin.token}` } })).body.data;
const slackStatus = async () => (await channelsAsAdmin()).find((channel: any) => channel.name === 'slack');

it('starts the hub with the Slack channel failed: reported, events refused with 503, nothing logged with the token', async () => {
  const failed = await slackStatus();
  expect(failed).toMatchObject({
    name: 'slack',
    enabled: true,
    mode: 'events',
    status: 'failed',
    error: 'auth.test failed: invalid_auth',
    started_at: null,
    last_event_at: null,
  });
  expect(Date.parse(failed.next_retry_at)).toBeGreaterThan(Date.now() - 60_000);

  const ready = await request(`${base}/health/ready`);
  expect(ready.status).toBe(200);
  expect(ready.body.data.channels.slack).toEqual({ status: 'failed', mode: 'events', error: 'auth.test failed: invalid_auth' });

  const refused = await signedEvent('hello while failed');
  expect(refused.status).toBe(503);
  expect(refused.headers.get('retry-after')).toBe('30');
  expect(refused.body).toMatchObject({ data: null, error: { code: 'SERVICE_UNAVAILABLE' } });
  expect(logs.entries().filter((entry) => entry.channel === 'slack' && entry.level === 'error')[0]).toMatchObject({
    msg: 'slack channel failed: auth.test failed: invalid_auth; retrying in 2 s (the rest of the hub keeps serving)',
  });
  expect(logs.text).not.toContain(BOT_TOKEN);
});

it('retries with backoff and comes up once Slack accepts the token; then takes events in and stamps last_event_at', async () => {
  slack.refusedTokens.delete(BOT_TOKEN);
  const deadline = Date.now() + 15_000;
  let status = await slackStatus();
  while (status.status !== 'running' && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    status = await slackStatus();
  }
  expect(status).toMatchObject({ status: 'running', error: null, next_retry_at: null, last_event_at: null });
  expect(Date.parse(status.started_at)).toBeLessThanOrEqual(Date.now());
  // One "started" line, with the mode, once it is really up.
  expect(logs.entries().filter((entry) => entry.msg === 'slack channel started (mode=events)')).toHaveLength(1);

  const taken = await signedEvent('hello once running');
  expect(taken.status).toBe(200);
  const after = await slackStatus();
  expect(Date.parse(after.last_event_at)).toBeGreaterThanOrEqual(Date.parse(status.started_at));
  expect((await request(`${base}/health/ready`)).body.data.channels.slack).toEqual({ status: 'running', mode: 'events' });
  await slack.waitFor((call) => call.method === 'chat.update' && call.args.channel === 'D1');
});

it('GET /admin/channels: exact fields for every channel of the registry; admins only; in the OpenAPI document', async () => {
  const all = await channelsAsAdmin();
  expect(all.map((channel: any) => channel.name)).toEqual(['slack', 'telegram', 'web', 'webchat', 'mattermost']);
  for (const channel of all) {
    expect(Object.keys(channel).sort()).toEqual(['enabled', 'error', 'last_event_at', 'mode', 'name', 'next_retry_at', 'started_at', 'status']);
  }
  expect(all[1]).toMatchObject({ name: 'telegram', enabled: false, mode: 'webhook', status: 'disabled', error: null, started_at: null });
  expect(all[2]).toMatchObject({ name: 'web', enabled: true, mode: 'rest+websocket', status: 'running', error: null });

  const user = await registerUser(base, 'plain');
  expect((await request(`${base}/admin/channels`, { headers: { authorization: `Bearer ${user.token}` } })).status).toBe(403);
  expect((await request(`${base}/admin/channels`)).status).toBe(401);

  const openapi = (await request(`${base}/openapi.json`)).body;
  expect(openapi.paths['/api/v1/admin/channels'].get).toBeDefined();
  expect(Object.keys(openapi.components.schemas.ChannelStatus.properties)).toEqual(
    expect.arrayContaining(['name', 'enabled', 'mode', 'status', 'error', 'last_event_at', 'started_at']),
  );
});

it('stamps the web channel’s last_event_at when a message is accepted on REST', async () => {
  const before = (await channelsAsAdmin()).find((channel: any) => channel.name === 'web');
  expect(before.last_event_at).toBeNull();
  const auth = { authorization: `Bearer ${admin.token}`, 'content-type': 'application/json' };
  const session = await request(`${base}/sessions`, { method: 'POST', headers: auth, body: '{}' });
  const sent = await request(`${base}/sessions/${session.body.data.id}/messages`, { method: 'POST', headers: auth, body: JSON.stringify({ text: 'hi' }) });
  expect(sent.status).toBe(202);
  const after = (await channelsAsAdmin()).find((channel: any) => channel.name === 'web');
  expect(Date.parse(after.last_event_at)).toBeGreaterThan(Date.now() - 10_000);
  expect(logs.entries().filter((entry) => entry.msg === 'web channel started (mode=rest+websocket)')).toHaveLength(1);
});

describe('SERVICE_SLACK_MODE', () => {
  it('socket is honoured: no signing secret needed, Socket Mode asks the configured API (with the app token) and a refused app token is a failed channel', async () => {
    const socketLogs = new LogCapture();
    slack.refusedTokens.add(APP_TOKEN);
    const socketHub = await startService({
      env: testEnv(makeTempDir(), {
        SERVICE_SLACK_MODE: 'socket',
        SERVICE_SLACK_BOT_TOKEN: BOT_TOKEN,
        SERVICE_SLACK_APP_TOKEN: APP_TOKEN,
        SERVICE_SLACK_API_URL: slack.url,
      }),
      cwd: makeTempDir(),
      logDestination: socketLogs,
      provider: new ScriptedProvider(),
    });
    try {
      const socketApi = `http://127.0.0.1:${socketHub.port}/api/v1`;
      const ready = await request(`${socketApi}/health/ready`);
      expect(ready.status).toBe(200);
      expect(ready.body.data.channels.slack).toEqual({ status: 'failed', mode: 'socket', error: 'apps.connections.open failed: invalid_auth' });
      expect(slack.callsOf('apps.connections.open').map((call) => call.token)).toContain(APP_TOKEN);
      // No Events API routes in socket mode.
      expect((await request(`${socketApi}/channels/slack/events`, { method: 'POST' })).status).toBe(404);
      expect(socketLogs.text).not.toContain(APP_TOKEN);
      expect(socketLogs.text).not.toContain('unknown environment variable SERVICE_SLACK_MODE');
    } finally {
      await socketHub.stop();
    }
  });
});
