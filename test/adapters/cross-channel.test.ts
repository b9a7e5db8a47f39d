import { createHmac, randomBytes } from 'node:crypto';
import path from 'node:path';
import { startService, type RunningService } from '../../src/main';
import { FAKE_SLACK, FakeSlackApi } from '../fakes/slack-api';
import { FakeTelegramApi } from '../fakes/telegram-api';
import { GENEROUS_RATE_LIMITS } from '../helpers/auth-service';
import { testEnv } from '../helpers/env';
import { jsonBody, request } from '../helpers/http';
import { LogCapture } from '../helpers/log-capture';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir';
import { registerUser } from '../helpers/users';
import { openSocket } from '../helpers/ws-client';

/**
 * One hub, three channels, the same conversation: Slack (signed Events API), Telegram (webhook) and
 * the WebSocket, with the default builtin model. Each gets the same workflow and the same answer.
 */
const SIGNING_SECRET = randomBytes(16).toString('hex');
const TELEGRAM_TOKEN = '999:cross-channel-token';
const TELEGRAM_SECRET = 'cross-channel-secret';
const TEXT = 'I need a refund for order 1234, the parcel arrived broken';

let slack: FakeSlackApi;
let telegram: FakeTelegramApi;
let service: RunningService;

beforeAll(async () => {
  slack = new FakeSlackApi();
  await slack.start();
  telegram = new FakeTelegramApi(TELEGRAM_TOKEN);
  await telegram.start();
  const cwd = makeTempDir();
  service = await startService({
    env: testEnv(path.join(cwd, 'data'), {
      ...GENEROUS_RATE_LIMITS,
      SERVICE_SLACK_BOT_TOKEN: `xoxb-${randomBytes(8).toString('hex')}`,
      SERVICE_SLACK_SIGNING_SECRET: SIGNING_SECRET,
      SERVICE_SLACK_API_URL: slack.url,
      SERVICE_TELEGRAM_BOT_TOKEN: TELEGRAM_TOKEN,
      SERVICE_TELEGRAM_API_ROOT: telegram.apiRoot,
      SERVICE_TELEGRAM_WEBHOOK_SECRET: TELEGRAM_SECRET,
    }),
    cwd,
    logDestination: new LogCapture(),
  });
});

afterAll(async () => {
  await service?.stop();
  await slack?.stop();
  await telegram?.stop();
  removeTempDirs();
});

it('routes the same message to the same workflow on Slack, Telegram and the WebSocket, with the same answer', async () => {
  const api = `http://127.0.0.1:${service.port}/api/v1`;
  const { token } = await registerUser(api, 'root');
  const auth = { authorization: `Bearer ${token}` };
  const support = await request(
    `${api}/assistant/workflows`,
    jsonBody(
      { name: 'support', system_prompt: 'You help customers.', triggers: { keywords: ['refund', 'broken'] }, binding_channels: ['web', 'slack', 'telegram'] },
      auth,
    ),
  );
  expect(support.status).toBe(201);
  await request(
    `${api}/assistant/workflows`,
    jsonBody({ name: 'sales', triggers: { keywords: ['pricing'] }, binding_channels: ['web', 'slack', 'telegram'] }, auth),
  );

  // WebSocket
  const sessionId = (await request(`${api}/sessions`, jsonBody({}, auth))).body.data.id;
  const socket = await openSocket(`ws://127.0.0.1:${service.port}/ws/v1/sessions/${sessionId}`, { headers: auth });
  socket.send({ type: 'user_message', payload: { text: TEXT, mode: 'normal' } });
  const answer = (await socket.nextOfType('done')).payload.text as string;
  expect(answer).toContain(`You wrote (11 words): "${TEXT}"`);
  socket.close();

  // Slack: a direct message, signed as Slack signs it
  const event = { type: 'message', channel_type: 'im', channel: 'D9', user: 'U9', text: TEXT, ts: '1710000001.000100', team: FAKE_SLACK.teamId };
  const body = JSON.stringify({
    token: 'legacy',
    team_id: FAKE_SLACK.teamId,
    api_app_id: 'A1',
    type: 'event_callback',
    event_id: 'EvCross1',
    event_time: Math.floor(Date.now() / 1000),
    event,
  });
  const timestamp = Math.floor(Date.now() / 1000);
  const signature = `v0=${createHmac('sha256', SIGNING_SECRET).update(`v0:${timestamp}:${body}`).digest('hex')}`;
  const slackAck = await request(`${api}/channels/slack/events`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-slack-request-timestamp': String(timestamp), 'x-slack-signature': signature },
    body,
  });
  expect(slackAck.status).toBe(200);
  await slack.waitFor((call) => call.method === 'chat.update' && call.args.channel === 'D9' && call.args.text === answer);

  // Telegram: a private chat through the webhook
  const update = {
    update_id: 5001,
    message: {
      message_id: 1,
      date: Math.floor(Date.now() / 1000),
      chat: { id: 4242, type: 'private', first_name: 'Ada' },
      from: { id: 77, is_bot: false, first_name: 'Ada' },
      text: TEXT,
    },
  };
  const telegramAck = await request(`${api}/channels/telegram/webhook`, jsonBody(update, { 'x-telegram-bot-api-secret-token': TELEGRAM_SECRET }));
  expect(telegramAck.status).toBe(200);
  await telegram.waitFor(
    (call) => ['sendMessage', 'editMessageText'].includes(call.method) && Number(call.params.chat_id) === 4242 && call.params.text === answer,
    10_000,
  );

  // The same workflow everywhere.
  const sessions = (await request(`${api}/sessions?limit=100`, { headers: auth })).body.data.items as any[];
  const workflowOf = (predicate: (session: any) => boolean) => sessions.find(predicate)?.active_workflow_id;
  expect(workflowOf((s) => s.id === sessionId)).toBe(support.body.data.id);
  expect(workflowOf((s) => s.channel === 'slack')).toBe(support.body.data.id);
  expect(workflowOf((s) => s.session_key === 'telegram::4242')).toBe(support.body.data.id);
});
