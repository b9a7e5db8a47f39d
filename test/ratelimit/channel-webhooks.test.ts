import { createHmac, randomBytes } from 'node:crypto';
import { startService, type RunningService } from '../../src/main';
import { FakeSlackApi } from '../fakes/slack-api';
import { testEnv } from '../helpers/env';
import { request } from '../helpers/http';
import { LogCapture } from '../helpers/log-capture';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir';

/**
 * Platform webhooks count under `channel_webhooks` (per delivering address), not under `default`:
 * a platform delivers a whole workspace's events from a few addresses, and they are signed.
 */
const SIGNING_SECRET = randomBytes(16).toString('hex');
let slack: FakeSlackApi;
let service: RunningService;

beforeAll(async () => {
  slack = new FakeSlackApi();
  await slack.start();
  service = await startService({
    env: testEnv(makeTempDir(), {
      SERVICE_RATE_LIMIT_DEFAULT: '2/minute',
      SERVICE_RATE_LIMIT_CHANNEL_WEBHOOKS: '4/minute',
      SERVICE_SLACK_BOT_TOKEN: `xoxb-${randomBytes(8).toString('hex')}`,
      SERVICE_SLACK_SIGNING_SECRET: SIGNING_SECRET,
      SERVICE_SLACK_API_URL: slack.url,
    }),
    cwd: makeTempDir(),
    logDestination: new LogCapture(),
  });
});

afterAll(async () => {
  await service?.stop();
  await slack?.stop();
  removeTempDirs();
});

function signedChallenge() {
  const body = JSON.stringify({ type: 'url_verification', token: 'legacy', challenge: randomBytes(4).toString('hex') });
  const timestamp = Math.floor(Date.now() / 1000);
  const signature = `v0=${createHmac('sha256', SIGNING_SECRET).update(`v0:${timestamp}:${body}`).digest('hex')}`;
  return request(`http://127.0.0.1:${service.port}/api/v1/channels/slack/events`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-slack-request-timestamp': String(timestamp), 'x-slack-signature': signature },
    body,
  });
}

it('Slack deliveries are limited by channel_webhooks, apart from the default limit', async () => {
  const statuses: number[] = [];
  for (let index = 0; index < 5; index += 1) statuses.push((await signedChallenge()).status);
  expect(statuses).toEqual([200, 200, 200, 200, 429]); // well past `default` (2/minute), stopped by its own 4/minute
  const other = [];
  for (let index = 0; index < 3; index += 1) other.push((await request(`http://127.0.0.1:${service.port}/api/v1/openapi.json`)).status);
  expect(other).toEqual([200, 200, 429]); // the webhooks did not use up `default`
});
