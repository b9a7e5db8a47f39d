import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { startService, type RunningService } from '../../../src/main';
import { ScriptedProvider } from '../../fakes/scripted-provider';
import { FakeTelegramApi } from '../../fakes/telegram-api';
import { GENEROUS_RATE_LIMITS } from '../../helpers/auth-service';
import { testEnv } from '../../helpers/env';
import { request } from '../../helpers/http';
import { LogCapture } from '../../helpers/log-capture';
import { makeTempDir, removeTempDirs } from '../../helpers/temp-dir';
import { registerUser } from '../../helpers/users';
import { BOT_TOKEN, textUpdate, waitForText, WEBHOOK_SECRET } from './telegram-harness';

/**
 * One rule for both modes: a Telegram channel whose token Telegram refuses (401) leaves the hub
 * serving, is reported failed, takes no updates (the webhook answers 503, so Telegram delivers
 * again; polling does not poll) and is started again with backoff until the token works.
 */
afterAll(removeTempDirs);

interface Hub {
  service: RunningService;
  telegram: FakeTelegramApi;
  logs: LogCapture;
  api: string;
  adminToken: string;
}

/** A hub whose Telegram token the fake Bot API does not (yet) accept. */
async function startWithRefusedToken(mode: 'webhook' | 'polling'): Promise<Hub> {
  const telegram = new FakeTelegramApi('999:the-token-telegram-knows');
  await telegram.start();
  const cwd = makeTempDir();
  writeFileSync(path.join(cwd, 'config.yaml'), `channels:\n  telegram:\n    mode: ${mode}\n    edit_interval_ms: 100\n`);
  const logs = new LogCapture();
  const env = testEnv(path.join(cwd, 'data'), {
    ...GENEROUS_RATE_LIMITS,
    SERVICE_TELEGRAM_BOT_TOKEN: BOT_TOKEN,
    SERVICE_TELEGRAM_API_ROOT: telegram.apiRoot,
    ...(mode === 'webhook' ? { SERVICE_TELEGRAM_WEBHOOK_SECRET: WEBHOOK_SECRET } : {}),
  });
  const service = await startService({ env, cwd, logDestination: logs, provider: new ScriptedProvider() });
  const api = `http://127.0.0.1:${service.port}/api/v1`;
  const { token } = await registerUser(api, 'root');
  return { service, telegram, logs, api, adminToken: token };
}

async function telegramStatus(hub: Hub): Promise<any> {
  const channels = await request(`${hub.api}/admin/channels`, { headers: { authorization: `Bearer ${hub.adminToken}` } });
  return channels.body.data.find((channel: any) => channel.name === 'telegram');
}

async function waitForStatus(hub: Hub, status: string, timeoutMs = 15_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const current = await telegramStatus(hub);
    if (current.status === status || Date.now() > deadline) return current;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function postUpdate(hub: Hub, update: Record<string, unknown>) {
  return request(`${hub.api}/channels/telegram/webhook`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-telegram-bot-api-secret-token': WEBHOOK_SECRET },
    body: JSON.stringify(update),
  });
}

async function stop(hub: Hub | undefined): Promise<void> {
  await hub?.service.stop();
  await hub?.telegram.stop();
}

describe('webhook mode with a wrong token (it used to run on, answering nothing)', () => {
  let hub: Hub;
  beforeAll(async () => {
    hub = await startWithRefusedToken('webhook');
  });
  afterAll(() => stop(hub));

  it('is failed with Telegram’s reason, in readiness and the admin status; the webhook answers 503', async () => {
    expect(await telegramStatus(hub)).toMatchObject({
      enabled: true,
      mode: 'webhook',
      status: 'failed',
      error: 'getMe failed: 401: Unauthorized',
      started_at: null,
    });
    const ready = await request(`${hub.api}/health/ready`);
    expect(ready.status).toBe(200);
    expect(ready.body.data.channels.telegram).toEqual({ status: 'failed', mode: 'webhook', error: 'getMe failed: 401: Unauthorized' });

    const refused = await postUpdate(hub, textUpdate(501, 'hello while failed'));
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('30');
    expect(refused.body).toMatchObject({ data: null, error: { code: 'SERVICE_UNAVAILABLE' } });
    // The secret is still checked first: a stranger learns nothing.
    const stranger = await request(`${hub.api}/channels/telegram/webhook`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(stranger.status).toBe(401);
    expect(hub.telegram.callsOf('sendMessage')).toHaveLength(0);
    expect(hub.logs.text).not.toContain(BOT_TOKEN);
    expect(hub.logs.text).not.toContain(WEBHOOK_SECRET);
  });

  it('comes up on a retry once the token works, logs one started line, and takes the redelivered update', async () => {
    hub.telegram.token = BOT_TOKEN;
    const running = await waitForStatus(hub, 'running');
    expect(running).toMatchObject({ status: 'running', error: null });
    expect(hub.logs.entries().filter((entry) => entry.msg === 'telegram channel started (mode=webhook)')).toHaveLength(1);
    expect((await postUpdate(hub, textUpdate(501, 'hello again'))).status).toBe(200);
    await waitForText(hub.telegram, 501, 'Hello there, friend.');
    expect(Date.parse((await telegramStatus(hub)).last_event_at)).toBeGreaterThanOrEqual(Date.parse(running.started_at));
  });
});

describe('polling mode (a wrong token used to stop the whole hub from starting)', () => {
  let hub: Hub;
  beforeAll(async () => {
    hub = await startWithRefusedToken('polling');
  });
  afterAll(() => stop(hub));

  it('starts the hub with the channel failed, and comes up once the token works', async () => {
    expect(await telegramStatus(hub)).toMatchObject({ mode: 'polling', status: 'failed', error: 'getMe failed: 401: Unauthorized' });
    expect(hub.telegram.callsOf('getUpdates')).toHaveLength(0);
    hub.telegram.token = BOT_TOKEN;
    expect(await waitForStatus(hub, 'running')).toMatchObject({ status: 'running', error: null });
    expect(hub.logs.entries().filter((entry) => entry.msg === 'telegram channel started (mode=polling)')).toHaveLength(1);
  });

  it('a token revoked while polling: failed with the reason, polling restarted once it works again', async () => {
    await hub.telegram.waitFor((call) => call.method === 'getUpdates');
    hub.telegram.token = '999:revoked';
    const failed = await waitForStatus(hub, 'failed');
    expect(failed).toMatchObject({
      status: 'failed',
      error: expect.stringMatching(/^(long polling stopped: 401: Unauthorized|getMe failed: 401: Unauthorized)$/),
    });
    hub.telegram.token = BOT_TOKEN;
    expect(await waitForStatus(hub, 'running')).toMatchObject({ status: 'running' });
    hub.telegram.queueUpdate(textUpdate(502, 'polled after the restart'));
    await waitForText(hub.telegram, 502, 'Hello there, friend.');
    expect(hub.logs.text).not.toContain(BOT_TOKEN);
  });
});
