import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { startService, type RunningService } from '../../src/main';
import { ScriptedProvider } from '../fakes/scripted-provider';
import { FakeTelegramApi } from '../fakes/telegram-api';
import { BOT_TOKEN, WEBHOOK_SECRET } from '../adapters/telegram/telegram-harness';
import { GENEROUS_RATE_LIMITS } from '../helpers/auth-service';
import { testEnv } from '../helpers/env';
import { LogCapture } from '../helpers/log-capture';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir';
import { registerUser } from '../helpers/users';
import { ConsoleWatch, launchBrowser, screenshot, signInThroughForm } from './browser';

/**
 * The admin page's "Test connection" (POST /admin/channels/{name}/test, issue 33) in the browser:
 * Telegram (a fake Bot API) accepting the token, then refusing it — the page names the variable to
 * fix and never shows the token — and an off channel naming the variable that turns it on, at
 * desktop and phone size, in both themes.
 */
jest.setTimeout(90_000);

const SIZES = { desktop: { width: 1280, height: 800 }, phone: { width: 390, height: 844 } } as const;
const VIEWS: [keyof typeof SIZES, 'light' | 'dark'][] = [
  ['desktop', 'light'],
  ['phone', 'dark'],
  ['desktop', 'dark'],
  ['phone', 'light'],
];

const telegram = new FakeTelegramApi(BOT_TOKEN);
const watch = new ConsoleWatch();
let service: RunningService;
let base: string;
let browser: Browser;

beforeAll(async () => {
  await telegram.start();
  const cwd = makeTempDir();
  writeFileSync(path.join(cwd, 'config.yaml'), 'channels:\n  telegram:\n    mode: webhook\n');
  const env = testEnv(path.join(cwd, 'data'), {
    ...GENEROUS_RATE_LIMITS,
    SERVICE_TELEGRAM_BOT_TOKEN: BOT_TOKEN,
    SERVICE_TELEGRAM_WEBHOOK_SECRET: WEBHOOK_SECRET,
    SERVICE_TELEGRAM_API_ROOT: telegram.apiRoot,
  });
  service = await startService({ env, cwd, logDestination: new LogCapture(), provider: new ScriptedProvider() });
  base = `http://127.0.0.1:${service.port}`;
  await registerUser(`${base}/api/v1`, 'root');
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await service?.stop();
  await telegram.stop();
  removeTempDirs();
});

async function channelsPage(size: keyof typeof SIZES, theme: 'light' | 'dark'): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport: SIZES[size], colorScheme: theme });
  const page = watch.watch(await context.newPage());
  page.setDefaultTimeout(15_000);
  await signInThroughForm(page, base, 'root', 'pw-root-long-enough');
  await page.goto(`${base}/admin/channels`);
  await page.getByRole('button', { name: 'Test the telegram connection' }).waitFor();
  return { context, page };
}

/** Clicks a channel's Test connection and returns what the page says about it. */
async function test(page: Page, channel: string): Promise<string> {
  const row = page.getByRole('row').filter({ has: page.getByRole('button', { name: `Test the ${channel} connection` }) });
  await row.getByRole('button', { name: `Test the ${channel} connection` }).click();
  const status = row.getByRole('status');
  await status.waitFor();
  await row
    .getByRole('button', { name: `Test the ${channel} connection` })
    .and(page.locator(':not([disabled])'))
    .waitFor();
  return ((await status.textContent()) ?? '').replace(/\s+/g, ' ').trim();
}

describe.each(VIEWS)('at %s size in the %s theme', (size, theme) => {
  it("shows a channel's connection test: success, a refused token naming its variable, an off channel", async () => {
    const { context, page } = await channelsPage(size, theme);
    expect(await test(page, 'telegram')).toBe('✓ Telegram accepts the token: the bot is @SwitchboardTestBot.');

    telegram.token = '999:another-token'; // the hub's token is revoked
    try {
      const refused = await test(page, 'telegram');
      expect(refused).toMatch(/^✗ Telegram refused the bot token \(401.*Fix SERVICE_TELEGRAM_BOT_TOKEN in the hub’s environment, then restart it\.$/);
      expect(await page.locator('body').textContent()).not.toContain(BOT_TOKEN);
      expect(await test(page, 'slack')).toBe(
        '✗ slack is off: set SERVICE_SLACK_BOT_TOKEN to turn it on. Fix SERVICE_SLACK_BOT_TOKEN in the hub’s environment, then restart it.',
      );
      // Nothing of the page is wider than the screen (the table scrolls inside itself).
      expect(await page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth)).toBeLessThanOrEqual(SIZES[size].width);
      await screenshot(page, `channel-test-${size}-${theme}`);
    } finally {
      telegram.token = BOT_TOKEN;
    }
    await context.close();
    expect(watch.take()).toEqual([]);
  });
});
