import { randomBytes } from 'node:crypto';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { FakeSlackApi } from '../fakes/slack-api';
import { GENEROUS_RATE_LIMITS } from '../helpers/auth-service';
import { testEnv } from '../helpers/env';
import { jsonBody, request } from '../helpers/http';
import { readyUrl, spawnService, type ServiceProcess } from '../helpers/process';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir';
import { ConsoleWatch, launchBrowser, screenshot, signInThroughForm } from './browser';
import { lowContrastButtons, lowContrastText } from './contrast';

/**
 * The Events tab (issue 29) on the built hub with the built-in offline model and a fake Slack: a
 * workflow with a token hook, a GitHub hook and a schedule; the hooks' URLs and test curls (naming
 * the secret's variable, never the secret), the schedule's next run, and a delivery posted with
 * fetch showing up as delivered without a reload. At desktop and phone size, light and dark, with
 * the contrast of its text and buttons and nothing wider than the screen.
 */
jest.setTimeout(120_000);

const ADMIN = { username: 'katherine', email: 'katherine@example.com', password: 'correct horse battery' };
const SIZES = { desktop: { width: 1280, height: 800 }, phone: { width: 390, height: 844 } } as const;
const CI_TOKEN = randomBytes(16).toString('hex');
const GITHUB_SECRET = randomBytes(16).toString('hex');
const CHANNEL = 'C0EVENTSUI';

const watch = new ConsoleWatch();
let slack: FakeSlackApi;
let hub: ServiceProcess;
let base: string;
let browser: Browser;

beforeAll(async () => {
  slack = new FakeSlackApi();
  await slack.start();
  const workDir = makeTempDir();
  hub = spawnService(
    testEnv(path.join(workDir, 'data'), {
      ...GENEROUS_RATE_LIMITS,
      SERVICE_SLACK_BOT_TOKEN: `xoxb-${randomBytes(8).toString('hex')}`,
      SERVICE_SLACK_SIGNING_SECRET: randomBytes(16).toString('hex'),
      SERVICE_SLACK_API_URL: slack.url,
      CI_HOOK_TOKEN: CI_TOKEN,
      DEPLOY_HOOK_SECRET: GITHUB_SECRET,
    }),
    { cwd: workDir },
  );
  base = await readyUrl(hub);
  const registered = await request(`${base}/api/v1/auth/register`, { method: 'POST', ...jsonBody(ADMIN) });
  const auth = { authorization: `Bearer ${registered.body.data.access_token as string}` };
  const created = await request(`${base}/api/v1/assistant/workflows`, {
    method: 'POST',
    ...jsonBody(
      {
        name: 'deploys',
        system_prompt: 'Summarise builds and deploys.',
        events: {
          webhooks: [
            {
              name: 'ci',
              verify: 'token',
              secret_env: 'CI_HOOK_TOKEN',
              message: 'Build {{ payload.build }}: {{ payload.result }}',
              deliver: `slack:${CHANNEL}`,
            },
            { name: 'github', verify: 'github', secret_env: 'DEPLOY_HOOK_SECRET', message: 'Deploy {{ payload.deployment.id }}', deliver: `slack:${CHANNEL}` },
          ],
          schedules: [{ name: 'handover', cron: '0 9 * * 1-5', timezone: 'Europe/Berlin', message: 'Post the handover.', deliver: `slack:${CHANNEL}` }],
        },
      },
      auth,
    ),
  });
  expect(created.status).toBe(201);
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  hub?.child.kill('SIGTERM');
  await hub?.exited;
  await slack?.stop();
  removeTempDirs();
});

async function open(size: keyof typeof SIZES, theme: 'light' | 'dark'): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport: SIZES[size], colorScheme: theme });
  const page = watch.watch(await context.newPage());
  page.setDefaultTimeout(15_000);
  await signInThroughForm(page, base, ADMIN.username, ADMIN.password);
  if (size === 'phone') await page.getByRole('button', { name: 'Open menu' }).click();
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Events' }).click();
  await page.waitForURL(/\/events$/);
  await page.getByRole('heading', { name: 'deploys' }).waitFor();
  return { context, page };
}

async function scrollsSideways(page: Page): Promise<boolean> {
  return page.evaluate(() => {
    const document = (globalThis as any).document;
    return document.documentElement.scrollWidth > document.documentElement.clientWidth;
  });
}

it('shows the hooks, the schedule and a delivery posted with fetch, live (desktop, dark)', async () => {
  const { context, page } = await open('desktop', 'dark');
  const main = page.locator('main');
  await main.getByText(`POST ${base}/api/v1/hooks/deploys/ci`).waitFor();
  await main.getByText(`POST ${base}/api/v1/hooks/deploys/github`).waitFor();
  expect(await page.getByLabel('Test request for ci').innerText()).toContain('Authorization: Bearer $CI_HOOK_TOKEN');
  expect(await page.getByLabel('Test request for github').innerText()).toContain('keyed with $DEPLOY_HOOK_SECRET');
  const text = await main.innerText();
  expect(text).not.toContain(CI_TOKEN);
  expect(text).not.toContain(GITHUB_SECRET);
  const schedule = page.getByRole('table', { name: 'Schedules' }).getByRole('row', { name: /handover/ });
  expect(await schedule.innerText()).toContain('Europe/Berlin');
  expect(await schedule.innerText()).not.toContain('—'); // a next run time is shown
  await page.getByText(/No deliveries yet/).waitFor();
  await screenshot(page, 'events-desktop-dark-before');

  // A delivery, the way a CI job sends it: the page shows it delivered without a reload.
  const posted = await fetch(`${base}/api/v1/hooks/deploys/ci`, {
    method: 'POST',
    headers: { authorization: `Bearer ${CI_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ build: 4711, result: 'passed' }),
  });
  expect(posted.status).toBe(202);
  const row = page.getByRole('table', { name: 'Recent deliveries' }).getByRole('row', { name: /ci/ });
  await row.getByText('delivered').waitFor({ timeout: 30_000 });
  await slack.waitFor((call) => call.method === 'chat.postMessage' && call.args.channel === CHANNEL);
  expect(await row.innerText()).toContain(`slack:${CHANNEL}`);
  expect(await row.innerText()).toMatch(/message \S+/);
  await screenshot(page, 'events-desktop-dark-delivered');

  expect(await lowContrastButtons(page.locator('main .btn'))).toEqual([]);
  expect(await lowContrastText(page, 'main', { states: false })).toEqual([]);
  expect(await scrollsSideways(page)).toBe(false);
  await context.close();
  expect(watch.take()).toEqual([]);
});

it.each([
  ['desktop', 'light'],
  ['phone', 'light'],
  ['phone', 'dark'],
] as const)('reads well at %s size in the %s theme, and explains `events:` when a workflow has none', async (size, theme) => {
  const { context, page } = await open(size, theme);
  await page.getByRole('table', { name: 'Recent deliveries' }).getByText('delivered').first().waitFor();
  await screenshot(page, `events-${size}-${theme}`);
  expect(await lowContrastButtons(page.locator('main .btn'))).toEqual([]);
  expect(await lowContrastText(page, 'main', { states: false })).toEqual([]);
  expect(await scrollsSideways(page)).toBe(false);

  // A workflow without events: the empty state says how to declare them and links the guide.
  await page.goto(`${base}/events?workflow=nothing-here`);
  await page.getByRole('heading', { name: 'No webhooks or schedules yet' }).waitFor();
  const guide = page.getByRole('link', { name: 'Events: webhooks and schedules' });
  expect(await guide.getAttribute('href')).toMatch(/\/guides\/events$/);
  await screenshot(page, `events-${size}-${theme}-empty`);
  expect(await lowContrastText(page, 'main', { states: false })).toEqual([]);
  expect(await scrollsSideways(page)).toBe(false);
  await context.close();
  expect(watch.take()).toEqual([]);
});
