import { randomBytes } from 'node:crypto';
import { startService, type RunningService } from '../../src/main';
import { FakeTelegramApi } from '../fakes/telegram-api';
import { ScriptedProvider } from '../fakes/scripted-provider';
import { GENEROUS_RATE_LIMITS } from '../helpers/auth-service';
import { testEnv } from '../helpers/env';
import { jsonBody, request } from '../helpers/http';
import { LogCapture } from '../helpers/log-capture';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir';
import { registerUser, type TestUser } from '../helpers/users';
import { runCli } from '../helpers/cli';
import { ChatWebhooks } from '../helpers/chat-webhooks';

/** Schedules in the embedded hub (croner): fires post into a fake Telegram chat; pause, resume, run; the YAML checks. */
const BOT_TOKEN = '777:schedule-bot';
const CHAT = -1001234567890;
/** Another chat, apart from the every-two-seconds schedule's. */
const WEEKLY_CHAT = -1009876543210;
const TELEGRAM_SECRET = randomBytes(8).toString('hex');

let telegram: FakeTelegramApi;
let service: RunningService;
let provider: ScriptedProvider;
let admin: TestUser;
let base: string;
let auth: Record<string, string>;

beforeAll(async () => {
  telegram = new FakeTelegramApi(BOT_TOKEN);
  await telegram.start();
  provider = new ScriptedProvider();
  provider.pieces = ['Handover: ', 'all quiet.'];
  service = await startService({
    env: testEnv(makeTempDir(), {
      ...GENEROUS_RATE_LIMITS,
      SERVICE_TELEGRAM_BOT_TOKEN: BOT_TOKEN,
      SERVICE_TELEGRAM_API_ROOT: telegram.apiRoot,
      SERVICE_TELEGRAM_WEBHOOK_SECRET: TELEGRAM_SECRET,
    }),
    cwd: makeTempDir(),
    logDestination: new LogCapture(),
    provider,
  });
  base = `http://127.0.0.1:${service.port}/api/v1`;
  admin = await registerUser(base, 'root');
  auth = { authorization: `Bearer ${admin.token}` };
});

afterAll(async () => {
  await service?.stop();
  await telegram?.stop();
  removeTempDirs();
});

function sentToChat() {
  return telegram.callsOf('sendMessage').filter((call) => Number(call.params.chat_id) === CHAT && call.params.text === 'Handover: all quiet.');
}

async function schedules() {
  return (await request(`${base}/schedules`, { headers: auth })).body.data.items as {
    name: string;
    paused: boolean;
    next_fire_at: string | null;
    last_outcome: string | null;
  }[];
}

async function until(check: () => boolean | Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

test('the workflow is refused, naming the field, for a bad cron, an unknown deliver channel and a template that does not parse', async () => {
  const answer = await request(
    `${base}/assistant/workflows/sync`,
    jsonBody(
      {
        workflows: [
          {
            name: 'broken',
            events: {
              webhooks: [{ name: 'h', verify: 'token', secret_env: 'X_SECRET', message: 'Hi {% if payload.a %}', deliver: 'slack:C1' }],
              schedules: [{ name: 's', cron: '61 * * * *', message: 'x', deliver: 'telegram:1' }],
            },
          },
          { name: 'nowhere', events: { webhooks: [{ name: 'h', verify: 'none', message: 'x', deliver: 'fax:123' }] } },
        ],
        dry_run: true,
      },
      auth,
    ),
  );
  expect(answer.status).toBe(200);
  const [broken, nowhere] = answer.body.data.errors;
  expect(Object.keys(broken.fields)).toEqual(expect.arrayContaining(['events.webhooks.0.message', 'events.schedules.0.cron']));
  expect(broken.fields['events.schedules.0.cron'][0].message).toMatch(/minute/);
  expect(nowhere.fields['events.webhooks.0.deliver'][0].code).toBe('unknown_channel');
});

test('a 6-field schedule fires every two seconds into the chat; paused it is skipped, resumed it fires again, run fires at once', async () => {
  const created = await request(
    `${base}/assistant/workflows`,
    jsonBody(
      {
        name: 'oncall',
        system_prompt: 'Write the on-call handover.',
        events: {
          schedules: [
            {
              name: 'handover',
              cron: '*/2 * * * * *',
              timezone: 'Europe/Berlin',
              message: 'Post the handover for {{ fire_time }}.',
              deliver: `telegram:${CHAT}`,
            },
          ],
        },
      },
      auth,
    ),
  );
  expect(created.status).toBe(201);
  await until(() => sentToChat().length >= 2);
  const fires = (await request(`${base}/hooks/deliveries?workflow=oncall&source=schedule`, { headers: auth })).body.data.items;
  expect(new Set(fires.map((item: { external_id: string }) => item.external_id)).size).toBe(fires.length);
  // Each fire is its own thread (the default thread key is the due time): a new first message, not a reply.
  expect(sentToChat()[1]!.params.reply_parameters).toBeUndefined();

  const paused = await request(`${base}/schedules/oncall/handover/pause`, { method: 'POST', headers: auth });
  expect(paused.status).toBe(200);
  expect(paused.body.data).toMatchObject({ paused: true, next_fire_at: null });
  // A fire already on its way finishes (its delivery settles) before the pause is judged.
  const settled = async () =>
    ((await request(`${base}/hooks/deliveries?workflow=oncall&limit=100`, { headers: auth })).body.data.items as { status: string }[]).every((item) =>
      ['delivered', 'failed'].includes(item.status),
    );
  await new Promise((resolve) => setTimeout(resolve, 500));
  await until(settled);
  const seen = sentToChat().length;
  await new Promise((resolve) => setTimeout(resolve, 4_500));
  expect(sentToChat().length).toBe(seen);

  const ran = await request(`${base}/schedules/oncall/handover/run`, { method: 'POST', headers: auth });
  expect(ran.status).toBe(202);
  await until(() => sentToChat().length === seen + 1);

  await request(`${base}/schedules/oncall/handover/resume`, { method: 'POST', headers: auth });
  await until(() => sentToChat().length >= seen + 2);
  const [listed] = await schedules();
  expect(listed).toMatchObject({ name: 'handover', paused: false, last_outcome: expect.stringMatching(/turn|delivered/) });
  expect(Date.parse(listed!.next_fire_at!)).toBeGreaterThan(Date.now() - 1_000);
  expect((await request(`${base}/schedules/oncall/nope/run`, { method: 'POST', headers: auth })).status).toBe(404);
});

test('the CLI lists schedules and deliveries and fires a schedule', async () => {
  const key = (await request(`${base}/auth/api-keys`, jsonBody({ label: 'cli' }, auth))).body.data.key as string;
  const env = { SWITCHBOARD_CONFIG_DIR: makeTempDir(), SWITCHBOARD_URL: `http://127.0.0.1:${service.port}`, SWITCHBOARD_API_KEY: key };
  const listed = await runCli(['events', 'schedules'], env);
  expect(listed).toMatchObject({ code: 0, stdout: expect.stringContaining('oncall/handover') });
  const fired = await runCli(['events', 'fire', 'oncall/handover'], env);
  expect(fired.code).toBe(0);
  const deliveryId = fired.stdout.trim();
  expect(deliveryId).toMatch(/^[0-9a-f-]{36}$/);
  const deliveries = await runCli(['events', 'deliveries', '--workflow', 'oncall', '--json'], env);
  expect(JSON.parse(deliveries.stdout).map((item: { id: string }) => item.id)).toContain(deliveryId);
  expect((await runCli(['events', 'fire', 'oncall'], env)).code).not.toBe(0);
});

test('fires with the same thread key reply to the thread’s first Telegram message', async () => {
  provider.pieces = ['Weekly ', 'report.'];
  const created = await request(
    `${base}/assistant/workflows`,
    jsonBody(
      {
        name: 'weekly',
        events: { schedules: [{ name: 'report', cron: '0 9 * * 1', message: 'Weekly report', deliver: `telegram:${WEEKLY_CHAT}`, thread: 'weekly-report' }] },
      },
      auth,
    ),
  );
  expect(created.status).toBe(201);
  const sent = () => telegram.callsOf('sendMessage').filter((call) => Number(call.params.chat_id) === WEEKLY_CHAT && call.params.text === 'Weekly report.');
  await request(`${base}/schedules/weekly/report/run`, { method: 'POST', headers: auth });
  await until(() => sent().length === 1);
  await request(`${base}/schedules/weekly/report/run`, { method: 'POST', headers: auth });
  await until(() => sent().length === 2);
  const [first, second] = sent();
  expect(first!.params.reply_parameters).toBeUndefined();
  expect(second!.params.reply_parameters.message_id).toBe(first!.result.message_id);

  // A person who replies to the report in the chat continues the event's conversation (not the chat's own session).
  const items = (await request(`${base}/hooks/deliveries?workflow=weekly`, { headers: auth })).body.data.items as { session_id: string }[];
  provider.pieces = ['Nothing ', 'else.'];
  await new ChatWebhooks('unused', TELEGRAM_SECRET).telegramUpdate(`http://127.0.0.1:${service.port}`, {
    update_id: 9101,
    message: {
      message_id: 9001,
      date: Math.floor(Date.now() / 1000),
      chat: { id: WEEKLY_CHAT, type: 'supergroup', title: 'ops' },
      from: { id: 42, is_bot: false, first_name: 'Ada' },
      text: 'Anything else this week?',
      reply_to_message: {
        message_id: second!.result.message_id,
        date: Math.floor(Date.now() / 1000),
        chat: { id: WEEKLY_CHAT, type: 'supergroup', title: 'ops' },
        from: { id: 777, is_bot: true, first_name: 'Switchboard' },
        text: 'Weekly report.',
      },
    },
  });
  await until(() => telegram.callsOf('sendMessage').some((call) => Number(call.params.chat_id) === WEEKLY_CHAT && call.params.text === 'Nothing else.'));
  const history = await request(`${base}/sessions/${items[0]!.session_id}/messages`, { headers: auth });
  expect(history.body.data.items.map((message: { content: string }) => message.content)).toEqual([
    'Weekly report',
    'Weekly report.',
    'Weekly report',
    'Weekly report.',
    'Anything else this week?',
    'Nothing else.',
  ]);
});

test('a failed schedule turn is said in its Telegram chat, naming the schedule and the error code', async () => {
  const created = await request(
    `${base}/assistant/workflows`,
    jsonBody({ name: 'failing', events: { schedules: [{ name: 'digest', cron: '0 9 * * 1', message: 'Digest', deliver: `telegram:${WEEKLY_CHAT}` }] } }, auth),
  );
  expect(created.status).toBe(201);
  provider.pieces = ['Partial ', 'digest'];
  provider.failAt = 1;
  await request(`${base}/schedules/failing/digest/run`, { method: 'POST', headers: auth });
  const note = () =>
    telegram
      .callsOf('sendMessage')
      .find((call) => Number(call.params.chat_id) === WEEKLY_CHAT && /^The digest schedule turn failed: [A-Z_]+\.$/.test(call.params.text));
  await until(() => note() !== undefined);
  provider.failAt = null;
  const items = (await request(`${base}/hooks/deliveries?workflow=failing`, { headers: auth })).body.data.items as {
    status: string;
    platform_message_id: string;
    reason: string;
  }[];
  await until(async () => ((await request(`${base}/hooks/deliveries?workflow=failing`, { headers: auth })).body.data.items[0].status as string) === 'failed');
  expect(items).toHaveLength(1);
  expect(note()!.params.text).toBe(
    `The digest schedule turn failed: ${(await request(`${base}/hooks/deliveries?workflow=failing`, { headers: auth })).body.data.items[0].reason.replace('the turn failed: ', '')}.`,
  );
});
