import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { GENEROUS_RATE_LIMITS } from '../helpers/auth-service';
import { testEnv } from '../helpers/env';
import { jsonBody, request } from '../helpers/http';
import { readyUrl, spawnService, type ServiceProcess } from '../helpers/process';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir';
import { ConsoleWatch, launchBrowser, screenshot, signInThroughForm } from './browser';

/**
 * Routing you can trust and honest chat states in the browser (issue 33), on the built hub with the
 * built-in offline model: the routing reason shown after a reload, a cancelled confirmation never
 * shown as done, a reload during a confirmation showing one bubble, and the editor's warnings. Each
 * case runs at desktop and phone size, in the light and the dark theme.
 */
jest.setTimeout(90_000);

const ADMIN = { username: 'hedy', email: 'hedy@example.com', password: 'correct horse battery' };
const SIZES = { desktop: { width: 1280, height: 800 }, phone: { width: 390, height: 844 } } as const;
const VIEWS: [keyof typeof SIZES, 'light' | 'dark'][] = [
  ['desktop', 'dark'],
  ['phone', 'light'],
  ['desktop', 'light'],
  ['phone', 'dark'],
];

const watch = new ConsoleWatch();
let hub: ServiceProcess;
let base: string;
let browser: Browser;
let auth: Record<string, string>;

beforeAll(async () => {
  const workDir = makeTempDir();
  hub = spawnService(testEnv(path.join(workDir, 'data'), GENEROUS_RATE_LIMITS), { cwd: workDir });
  base = await readyUrl(hub);
  const registered = await request(`${base}/api/v1/auth/register`, { method: 'POST', ...jsonBody(ADMIN) });
  auth = { authorization: `Bearer ${registered.body.data.access_token as string}` };
  const created = await request(`${base}/api/v1/assistant/workflows`, {
    method: 'POST',
    ...jsonBody({ name: 'concierge', system_prompt: 'You greet people.', binding_channels: ['web'], default: true, tool_list: 'write_file' }, auth),
  });
  expect(created.status).toBe(201);
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  hub?.child.kill('SIGTERM');
  await hub?.exited;
  removeTempDirs();
});

async function open(size: keyof typeof SIZES, theme: 'light' | 'dark'): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport: SIZES[size], colorScheme: theme });
  const page = watch.watch(await context.newPage());
  page.setDefaultTimeout(15_000);
  await signInThroughForm(page, base, ADMIN.username, ADMIN.password);
  return { context, page };
}

async function newChat(page: Page, name: string): Promise<void> {
  const session = await request(`${base}/api/v1/sessions`, { method: 'POST', ...jsonBody({ name }, auth) });
  await page.goto(`${base}/sessions/${session.body.data.id as string}`);
  await page.getByRole('textbox', { name: 'Message' }).waitFor();
}

async function send(page: Page, text: string): Promise<void> {
  await page.getByRole('textbox', { name: 'Message' }).fill(text);
  await page.getByRole('button', { name: 'Send' }).click();
}

const conversation = (page: Page) => page.getByRole('log', { name: 'Conversation' });
const agentBubbles = (page: Page) => conversation(page).getByRole('article', { name: 'Agent' });

describe.each(VIEWS)('at %s size in the %s theme', (size, theme) => {
  it('shows which workflow answered and why, live and after a reload', async () => {
    const { context, page } = await open(size, theme);
    await newChat(page, `routing ${size} ${theme}`);
    await send(page, 'what time is it in Tokyo?');
    await conversation(page).getByText('workflow concierge (channel_default)').waitFor();
    await page.reload();
    await conversation(page).getByText('workflow concierge (channel_default)').waitFor();
    await page.getByRole('status', { name: 'Agent: Ready' }).waitFor();
    // The replayed turn adds nothing to the stored reply: one bubble, its text once.
    expect(await agentBubbles(page).count()).toBe(1);
    expect(((await conversation(page).textContent()) ?? '').split('what time is it in Tokyo?').length - 1).toBe(2); // the question, and the reply quoting it once
    await screenshot(page, `honest-${size}-${theme}-routing-after-reload`);
    // Nothing of the chat is wider than the screen (the header's controls wrap on a phone).
    const widest = await page.evaluate(() => {
      const document = (globalThis as any).document;
      return Math.max(...(Array.from(document.querySelectorAll('.chat-page *')) as any[]).map((element) => element.getBoundingClientRect().right));
    });
    expect(widest).toBeLessThanOrEqual(SIZES[size].width);
    await context.close();
    expect(watch.take()).toEqual([]);
  });

  it('keeps a cancelled confirmation cancelled after a reload, and a reload during a confirmation shows one bubble', async () => {
    const { context, page } = await open(size, theme);
    await newChat(page, `confirm ${size} ${theme}`);
    await send(page, `write a file notes-${size}-${theme}.txt containing the meeting notes`);
    await page.getByRole('dialog').waitFor();
    await page.reload();
    await page.getByRole('dialog').waitFor();
    expect(await agentBubbles(page).count()).toBe(1);
    await screenshot(page, `honest-${size}-${theme}-confirmation-after-reload`);
    await page
      .getByRole('dialog')
      .getByRole('button', { name: /^Cancel c$/ })
      .click();
    await page.getByRole('dialog').waitFor({ state: 'detached' });
    await page.getByRole('status', { name: 'Agent: Ready' }).waitFor();
    await page.reload();
    const chip = conversation(page).locator('.tool-chip').filter({ hasText: 'write_file' });
    await chip.first().waitFor();
    expect(await chip.count()).toBe(1);
    const label = (await chip.first().locator('summary').textContent()) ?? '';
    expect(label).not.toMatch(/done/);
    expect(label).toMatch(/cancelled/);
    expect(await agentBubbles(page).count()).toBe(1);
    await screenshot(page, `honest-${size}-${theme}-cancelled-after-reload`);
    await context.close();
    expect(watch.take()).toEqual([]);
  });

  it('shows the warnings of a save in the workflow editor', async () => {
    const { context, page } = await open(size, theme);
    await page.goto(`${base}/workflows/new`);
    const name = `lonely-${size}-${theme}`;
    const editor = page.getByRole('textbox').first();
    await editor.fill(`name: ${name}\nsystem_prompt: You are alone.\nbinding_channels:\n  - web\n`);
    await page.getByRole('button', { name: 'Create workflow' }).click();
    await page.waitForURL(new RegExp(`/workflows/${name}$`));
    const warnings = page.getByRole('list', { name: 'Warnings' });
    await warnings.waitFor();
    expect(await warnings.textContent()).toContain('the router never picks it');
    await screenshot(page, `honest-${size}-${theme}-editor-warnings`);
    await context.close();
    expect(watch.take()).toEqual([]);
  });
});
