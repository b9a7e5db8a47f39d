import { createHmac, randomBytes } from 'node:crypto';
import { startService, type RunningService } from '../../src/main';
import { FAKE_SLACK, FakeSlackApi } from '../fakes/slack-api';
import { FakeTelegramApi } from '../fakes/telegram-api';
import { ScriptedProvider } from '../fakes/scripted-provider';
import { GENEROUS_RATE_LIMITS } from '../helpers/auth-service';
import { testEnv } from '../helpers/env';
import { jsonBody, request } from '../helpers/http';
import { LogCapture } from '../helpers/log-capture';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir';

/**
 * Chat platforms' webhooks on genuine but unexpected input (issue 26): Slack payloads whose fields
 * have the wrong types answer without a 503 (which would make Slack deliver them again and again);
 * genuine shapes this hub has no listener for are acknowledged at once (not bolt's empty 404 after
 * 3 s), logged and dropped; a Telegram button click whose answerCallbackQuery Telegram refuses (too
 * old, answered already) still answers the webhook 200.
 */

const SIGNING_SECRET = randomBytes(16).toString('hex');
const BOT_TOKEN = `xoxb-${randomBytes(8).toString('hex')}`;
const TELEGRAM_TOKEN = '4242:shapes-bot-token';
const TELEGRAM_SECRET = randomBytes(12).toString('hex');

let slack: FakeSlackApi;
let telegram: FakeTelegramApi;
let service: RunningService;
let logs: LogCapture;
let base: string;

beforeAll(async () => {
  slack = new FakeSlackApi();
  await slack.start();
  telegram = new FakeTelegramApi(TELEGRAM_TOKEN);
  await telegram.start();
  logs = new LogCapture();
  service = await startService({
    env: testEnv(makeTempDir(), {
      ...GENEROUS_RATE_LIMITS,
      SERVICE_SLACK_BOT_TOKEN: BOT_TOKEN,
      SERVICE_SLACK_SIGNING_SECRET: SIGNING_SECRET,
      SERVICE_SLACK_API_URL: slack.url,
      SERVICE_TELEGRAM_BOT_TOKEN: TELEGRAM_TOKEN,
      SERVICE_TELEGRAM_WEBHOOK_SECRET: TELEGRAM_SECRET,
      SERVICE_TELEGRAM_API_ROOT: telegram.apiRoot,
    }),
    cwd: makeTempDir(),
    logDestination: logs,
    provider: new ScriptedProvider(),
  });
  base = `http://127.0.0.1:${service.port}/api/v1`;
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const ready = await request(`${base}/health/ready`);
    if (ready.body.data?.channels?.slack?.status === 'running' && ready.body.data?.channels?.telegram?.status === 'running') break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
});

afterAll(async () => {
  await service?.stop();
  await slack?.stop();
  await telegram?.stop();
  removeTempDirs();
});

function signed(path: 'events' | 'interactions', body: string, contentType: string) {
  const timestamp = Math.floor(Date.now() / 1000);
  const signature = `v0=${createHmac('sha256', SIGNING_SECRET).update(`v0:${timestamp}:${body}`).digest('hex')}`;
  return request(`${base}/channels/slack/${path}`, {
    method: 'POST',
    headers: { 'content-type': contentType, 'x-slack-request-timestamp': String(timestamp), 'x-slack-signature': signature },
    body,
  });
}
const event = (payload: unknown) => signed('events', JSON.stringify(payload), 'application/json');
const interaction = (payload: unknown) =>
  signed('interactions', new URLSearchParams({ payload: JSON.stringify(payload) }).toString(), 'application/x-www-form-urlencoded');

const blockActions = (overrides: Record<string, unknown>) => ({
  type: 'block_actions',
  team: { id: FAKE_SLACK.teamId, domain: 'x' },
  user: { id: 'U1', name: 'ada', team_id: FAKE_SLACK.teamId },
  api_app_id: 'A1',
  token: 'legacy',
  trigger_id: '1.2.3',
  container: { type: 'message', message_ts: '1.1', channel_id: 'C1' },
  channel: { id: 'C1', name: 'general' },
  message: { ts: '1.1', text: 'x' },
  actions: [{ action_id: 'switchboard_confirm_allow', block_id: 'b', type: 'button', value: 'nonsense', action_ts: '1.2' }],
  ...overrides,
});

describe('Slack: signed payloads with fields of the wrong type', () => {
  it.each([
    ['actions is a number', blockActions({ actions: 5 })],
    ['an action is a string', blockActions({ actions: ['x'] })],
    ['action_id is a number', blockActions({ actions: [{ action_id: 5, type: 'button', value: 'x' }] })],
    ['user is a string', blockActions({ user: 'U1' })],
    ['team is a number', blockActions({ team: 7 })],
    ['channel is an array', blockActions({ channel: [] })],
    ['message is a string', blockActions({ message: 'x' })],
    ['value is an object', blockActions({ actions: [{ action_id: 'switchboard_confirm_allow', type: 'button', value: { a: 1 } }] })],
  ])('%s: answered without a 5xx, in the envelope when refused', async (_name, payload) => {
    const answer = await interaction(payload);
    expect(answer.status).toBeLessThan(500);
    if (answer.status >= 400) expect(answer.body.error).toMatchObject({ code: expect.any(String), message: expect.any(String) });
  });

  it.each([
    ['event.user is a number', { type: 'message', channel_type: 'im', channel: 'D1', user: 42, text: 'x', ts: '1.1' }],
    ['event.text is an object', { type: 'app_mention', channel: 'C1', user: 'U1', text: { a: 1 }, ts: '1.1' }],
    ['authorizations is a string', { type: 'message', channel_type: 'im', channel: 'D1', user: 'U1', text: 'x', ts: '1.1' }],
  ])('event_callback, %s: answered without a 5xx', async (_name, inner) => {
    const answer = await event({
      token: 'legacy',
      team_id: FAKE_SLACK.teamId,
      api_app_id: 'A1',
      type: 'event_callback',
      event_id: `Ev${randomBytes(4).toString('hex')}`,
      event_time: 1,
      authorizations: 'x',
      event: inner,
    });
    expect(answer.status).toBeLessThan(500);
  });
});

describe('Slack: genuine payloads with no listener here are acknowledged at once', () => {
  it.each([
    [
      'app_rate_limited',
      () => event({ token: 'legacy', type: 'app_rate_limited', team_id: FAKE_SLACK.teamId, minute_rate_limited: 1518467820, api_app_id: 'A1' }),
    ],
    [
      'a global shortcut',
      () =>
        interaction({
          type: 'shortcut',
          token: 'legacy',
          action_ts: '1.2',
          team: { id: FAKE_SLACK.teamId },
          user: { id: 'U1' },
          callback_id: 'open_modal',
          trigger_id: '1.2.3',
        }),
    ],
    [
      'a message shortcut',
      () =>
        interaction({
          type: 'message_action',
          callback_id: 'x',
          team: { id: FAKE_SLACK.teamId },
          user: { id: 'U1' },
          channel: { id: 'C1' },
          message: { ts: '1.1' },
          trigger_id: '1.2.3',
        }),
    ],
    [
      'another app’s button',
      () => interaction(blockActions({ actions: [{ action_id: 'other_app_approve', type: 'button', value: 'x', block_id: 'b', action_ts: '1.2' }] })),
    ],
    [
      'a modal submission',
      () => interaction({ type: 'view_submission', team: { id: FAKE_SLACK.teamId }, user: { id: 'U1' }, view: { id: 'V1', callback_id: 'x' } }),
    ],
  ])('%s: 200 at once, logged and dropped', async (name, send) => {
    const started = Date.now();
    const answer = await send();
    expect(answer.status).toBe(200);
    expect(Date.now() - started).toBeLessThan(1_500);
    expect(logs.lines.some((line) => line.includes('does not handle was acknowledged and dropped'))).toBe(true);
    void name;
  });
});

describe('Telegram: a button click whose answerCallbackQuery fails', () => {
  it('answers the webhook 200 (Telegram would deliver it again forever) and logs the refusal', async () => {
    telegram.staleCallbackQueries = true;
    try {
      const click = {
        update_id: 9_000_001,
        callback_query: {
          id: 'stale-query',
          chat_instance: 'i',
          from: { id: 77, is_bot: false, first_name: 'Ada' },
          data: 'not-ours',
          message: { message_id: 1, date: 0, chat: { id: 77, type: 'private' }, text: 'x' },
        },
      };
      const answer = await request(`${base}/channels/telegram/webhook`, jsonBody(click, { 'x-telegram-bot-api-secret-token': TELEGRAM_SECRET }));
      expect([answer.status, answer.body]).toEqual([200, { ok: true }]);
      expect(logs.lines.some((line) => line.includes('could not answer a button click'))).toBe(true);
      expect(logs.lines.join('\n')).not.toContain(TELEGRAM_TOKEN);
    } finally {
      telegram.staleCallbackQueries = false;
    }
  });
});
