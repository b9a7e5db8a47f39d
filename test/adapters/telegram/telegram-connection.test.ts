import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { startService, type RunningService } from '../../../src/main';
import { ScriptedProvider } from '../../fakes/scripted-provider';
import { FakeTelegramApi } from '../../fakes/telegram-api';
import { GENEROUS_RATE_LIMITS } from '../../helpers/auth-service';
import { runCli } from '../../helpers/cli';
import { testEnv } from '../../helpers/env';
import { jsonBody, request } from '../../helpers/http';
import { LogCapture } from '../../helpers/log-capture';
import { makeTempDir, removeTempDirs } from '../../helpers/temp-dir';
import { registerUser } from '../../helpers/users';
import { BOT_TOKEN, WEBHOOK_SECRET } from './telegram-harness';

/**
 * Telegram's webhook without a manual step (issue 33): registered on start when `public_url` is set,
 * on demand through `POST /admin/channels/telegram/webhook` and `switchboard channels telegram
 * set-webhook`; and a connection test per channel that names the variable to fix.
 */
const PUBLIC_URL = 'https://hub.example.test';
const telegram = new FakeTelegramApi(BOT_TOKEN);
let service: RunningService;
let api: string;
let admin: Record<string, string>;
let cliEnv: Record<string, string>;

beforeAll(async () => {
  await telegram.start();
  const cwd = makeTempDir();
  writeFileSync(path.join(cwd, 'config.yaml'), 'channels:\n  telegram:\n    mode: webhook\n');
  const env = testEnv(path.join(cwd, 'data'), {
    ...GENEROUS_RATE_LIMITS,
    SERVICE_PUBLIC_URL: PUBLIC_URL,
    SERVICE_TELEGRAM_BOT_TOKEN: BOT_TOKEN,
    SERVICE_TELEGRAM_WEBHOOK_SECRET: WEBHOOK_SECRET,
    SERVICE_TELEGRAM_API_ROOT: telegram.apiRoot,
  });
  service = await startService({ env, cwd, logDestination: new LogCapture(), provider: new ScriptedProvider() });
  api = `http://127.0.0.1:${service.port}/api/v1`;
  const root = await registerUser(api, 'root');
  admin = { authorization: `Bearer ${root.token}` };
  const key = await request(`${api}/auth/api-keys`, jsonBody({ label: 'cli' }, admin));
  cliEnv = { SWITCHBOARD_CONFIG_DIR: makeTempDir(), SWITCHBOARD_URL: `http://127.0.0.1:${service.port}`, SWITCHBOARD_API_KEY: key.body.data.key };
});

afterAll(async () => {
  await service.stop();
  await telegram.stop();
  removeTempDirs();
});

const webhookCalls = () => telegram.calls.filter((call) => call.method === 'setWebhook');
const post = (route: string) => request(`${api}${route}`, { method: 'POST', headers: admin });

describe('the Telegram webhook', () => {
  it('is registered on start at <public_url>/api/v1/channels/telegram/webhook, with the secret', () => {
    expect(webhookCalls()).toHaveLength(1);
    expect(webhookCalls()[0]!.params).toMatchObject({ url: `${PUBLIC_URL}/api/v1/channels/telegram/webhook`, secret_token: WEBHOOK_SECRET });
  });

  it('is registered again on demand: the API and `switchboard channels telegram set-webhook`', async () => {
    const answer = await post('/admin/channels/telegram/webhook');
    expect(answer.body.data).toEqual({ channel: 'telegram', url: `${PUBLIC_URL}/api/v1/channels/telegram/webhook` });
    const cli = await runCli(['channels', 'telegram', 'set-webhook'], cliEnv);
    expect(cli).toMatchObject({ code: 0, stdout: `Telegram now delivers updates to ${PUBLIC_URL}/api/v1/channels/telegram/webhook.\n` });
    expect(webhookCalls()).toHaveLength(3);
    // A channel with no webhook to register says so.
    expect((await post('/admin/channels/web/webhook')).body.error).toMatchObject({ code: 'CONFLICT', message: 'web has no webhook to register.' });
  });
});

describe('test connection', () => {
  it('says the token works, naming the bot', async () => {
    expect((await post('/admin/channels/telegram/test')).body.data).toEqual({
      channel: 'telegram',
      enabled: true,
      ok: true,
      detail: 'Telegram accepts the token: the bot is @SwitchboardTestBot.',
      variable: null,
    });
    const cli = await runCli(['channels', 'test', 'telegram'], cliEnv);
    expect(cli).toMatchObject({ code: 0, stdout: '✓ telegram: Telegram accepts the token: the bot is @SwitchboardTestBot.\n' });
  });

  it('names the variable to fix when Telegram refuses the token, never printing the token', async () => {
    telegram.token = '999:another-token';
    try {
      const check = (await post('/admin/channels/telegram/test')).body.data;
      expect(check).toMatchObject({
        ok: false,
        variable: 'SERVICE_TELEGRAM_BOT_TOKEN',
        detail: expect.stringMatching(/^Telegram refused the bot token \(401/),
      });
      const cli = await runCli(['channels', 'test', 'telegram'], cliEnv);
      expect(cli.code).toBe(1);
      expect(cli.stderr).toMatch(
        /^✗ telegram: Telegram refused the bot token .* Check SERVICE_TELEGRAM_BOT_TOKEN in the hub's environment, then restart it\.\n$/,
      );
      expect(JSON.stringify(check) + cli.stderr).not.toContain(BOT_TOKEN);
    } finally {
      telegram.token = BOT_TOKEN;
    }
  });

  it('says which variable turns an off channel on, and that the web channel has nothing to check', async () => {
    expect((await post('/admin/channels/slack/test')).body.data).toEqual({
      channel: 'slack',
      enabled: false,
      ok: false,
      detail: 'slack is off: set SERVICE_SLACK_BOT_TOKEN to turn it on.',
      variable: 'SERVICE_SLACK_BOT_TOKEN',
    });
    expect((await post('/admin/channels/web/test')).body.data).toMatchObject({ channel: 'web', enabled: true, ok: true });
  });
});
