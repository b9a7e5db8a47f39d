import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { startService } from '../../../src/main';
import { ConfigError } from '../../../src/config';
import { ScriptedProvider } from '../../fakes/scripted-provider';
import { testEnv } from '../../helpers/env';
import { LogCapture } from '../../helpers/log-capture';
import { makeTempDir, removeTempDirs } from '../../helpers/temp-dir';
import { BOT_TOKEN, startTelegramHarness, textUpdate, waitForText, type TelegramHarness } from './telegram-harness';

afterAll(removeTempDirs);

describe('long-polling mode', () => {
  let h: TelegramHarness;

  beforeAll(async () => {
    h = await startTelegramHarness('polling');
  });

  afterAll(async () => {
    await h.service.stop();
    await h.telegram.stop();
  });

  it('takes an update from getUpdates and answers it, with no webhook route', async () => {
    // Polling needs no webhook: launch removes one that may be set, and the route is not mounted.
    expect(h.telegram.callsOf('deleteWebhook')).toHaveLength(1);
    const route = await fetch(`${h.api}/channels/telegram/webhook`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(route.status).toBe(404);

    h.provider.pieces = ['Polled', ' and answered.'];
    const update = textUpdate(301, 'hello by polling');
    h.telegram.queueUpdate(update);
    await waitForText(h.telegram, 301, 'Polled and answered.');
    // The next poll confirms the update (offset past it), so it is not delivered again.
    const confirmed = await h.telegram.waitFor((call) => call.method === 'getUpdates' && Number(call.params.offset) === update.update_id + 1);
    expect(confirmed.params.timeout).toBeGreaterThan(0);
  });
});

describe('startup', () => {
  it('refuses webhook mode without a webhook secret, naming the key', async () => {
    const cwd = makeTempDir();
    const env = testEnv(makeTempDir(), { SERVICE_TELEGRAM_BOT_TOKEN: BOT_TOKEN, SERVICE_TELEGRAM_API_ROOT: 'http://127.0.0.1:9' });
    const started = startService({ env, cwd, logDestination: new LogCapture(), provider: new ScriptedProvider() });
    await expect(started).rejects.toThrow(ConfigError);
    await expect(started).rejects.toThrow(/SERVICE_TELEGRAM_WEBHOOK_SECRET/);
  });

  it('refuses an enabled channel without a bot token', async () => {
    const env = testEnv(makeTempDir(), {});
    const cwd = makeTempDir();
    writeFileSync(path.join(cwd, 'config.yaml'), 'channels:\n  telegram:\n    enabled: true\n');
    await expect(startService({ env, cwd, logDestination: new LogCapture(), provider: new ScriptedProvider() })).rejects.toThrow(/SERVICE_TELEGRAM_BOT_TOKEN/);
  });
});
