import type { Browser, Page } from 'playwright-core';
import { EXTRA_INSTALL_TIMEOUT_MS, ensureExtra } from '../../helpers/extras';
import { removeTempDirs } from '../../helpers/temp-dir';
import { ConsoleWatch, launchBrowser, newContext, screenshot } from '../../web/browser';
import { startWebchatHarness, type WebchatHarness } from './webchat-harness';

/**
 * The demo page end to end: the hub serves /webchat/demo with the rasa-webchat widget from its npm
 * package, headless Chromium (Debian's, never downloaded) opens it and chats through the widget as
 * a visitor would; a reload keeps the conversation's session. The widget's package is not part of the
 * default install (extras/webchat-widget): installed here on first use, as `npm run extras:install` does.
 */
jest.setTimeout(60_000);

let harness: WebchatHarness;
let browser: Browser;
let page: Page;
const watch = new ConsoleWatch();

beforeAll(async () => {
  ensureExtra('webchat-widget');
  harness = await startWebchatHarness();
  browser = await launchBrowser();
  page = watch.watch(await (await newContext(browser, 'light')).newPage());
  page.setDefaultTimeout(15_000);
}, 60_000 + EXTRA_INSTALL_TIMEOUT_MS);

afterAll(async () => {
  await browser?.close();
  await harness?.stop();
  removeTempDirs();
});

/** Resolves once the widget's opening animation (and any other finite one) has run. */
const settled = (on: Page) =>
  on.evaluate(
    'Promise.all(document.getAnimations().filter((a) => a.effect && a.effect.getComputedTiming().endTime !== Infinity).map((a) => a.finished)).then(() => true)',
  );

/** The session id the widget keeps in local storage (rasa-webchat's `chat_session` entry). */
const storedSessionId = (on: Page) => on.evaluate('JSON.parse(localStorage.getItem("chat_session") || "{}").session_id') as Promise<string>;

/** What the page logged as errors: none at all, CSP refusals included (issue 25: the widget's font import logged 11 per load). */
const pageErrors = () => watch.take();

it('serves the demo page with the widget, which connects and answers in paragraphs, showing typing while the agent works', async () => {
  const response = await page.goto(`${harness.base}/webchat/demo`);
  expect(response?.status()).toBe(200);
  expect(response?.headers()['content-security-policy']).toContain("script-src 'self'");
  expect(response?.headers()['content-security-policy']).toContain("connect-src 'self';");
  await page.locator('.rw-launcher').click();
  const input = page.locator('.rw-new-message');
  await input.waitFor();

  harness.provider.pieces = ['Hello from the hub.', '\n\n', 'Second paragraph', ' of the answer.'];
  harness.provider.pauseBefore = 1;
  await input.fill('Hi there, who are you?');
  await input.press('Enter');
  await harness.provider.paused();
  // The first paragraph is not complete yet: the page shows the agent typing.
  await page.locator('body.webchat-typing').waitFor();
  await settled(page);
  await screenshot(page, 'webchat-demo-typing');
  harness.provider.pauseBefore = null;
  harness.provider.release();

  const responses = page.locator('.rw-response');
  await responses.filter({ hasText: 'Second paragraph of the answer.' }).waitFor();
  expect(await responses.allInnerTexts()).toEqual(['Hello from the hub.', 'Second paragraph of the answer.']);
  await page.locator('body:not(.webchat-typing)').waitFor();
  await settled(page);
  await screenshot(page, 'webchat-demo-conversation');
  expect(pageErrors()).toEqual([]);

  const sessions = (await harness.admin('GET', '/sessions?limit=100')).body.data.items.filter((session: { channel: string }) => session.channel === 'webchat');
  expect(sessions).toHaveLength(1);
  const contacts = (await harness.admin('GET', '/assistant/contacts')).body.data.items;
  expect(contacts.find((contact: { session_key: string }) => contact.session_key === sessions[0].session_key)?.tags).toEqual(['demo']);
});

it('keeps the session across a reload of the page', async () => {
  const kept = await storedSessionId(page);
  expect(kept).toMatch(/^[0-9a-f]{64}$/);
  await page.reload();
  // The widget restores the conversation from local storage and asks for its session again.
  await page.locator('.rw-response', { hasText: 'Second paragraph of the answer.' }).waitFor();
  harness.provider.pieces = ['Still you.'];
  const input = page.locator('.rw-new-message');
  await input.fill('Me again');
  await input.press('Enter');
  await page.locator('.rw-response', { hasText: 'Still you.' }).waitFor();
  expect(await storedSessionId(page)).toBe(kept);
  const sessions = (await harness.admin('GET', '/sessions?limit=100')).body.data.items.filter((session: { channel: string }) => session.channel === 'webchat');
  expect(sessions).toHaveLength(1);
  expect(harness.provider.requests.at(-1)!.messages.map((message) => message.content)).toContain('Hi there, who are you?');
  expect(pageErrors()).toEqual([]);
});
