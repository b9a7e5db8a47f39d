import type { Browser, BrowserContext, Page } from 'playwright-core';
import { removeTempDirs } from '../helpers/temp-dir';
import { startWebchatHarness, Widget, type WebchatHarness } from '../adapters/webchat/webchat-harness';
import { ConsoleWatch, launchBrowser, screenshot } from './browser';

/**
 * Honest chat states for messages queued mid-turn (issue 33), in the browser: a visitor of the
 * website widget (a chat channel: mid-turn `queue`) sends three messages while the first turn runs,
 * and an admin follows the conversation in the Web UI. Each question and each reply shows once —
 * live, after a reload while the first turn runs, and after a reload once all are answered — and
 * the two waiting behind the running turn show as Queued after a reload (from the history's
 * `status`), at desktop and phone size, in both themes. The model is scripted, so the first turn
 * holds until the test lets it go.
 */
jest.setTimeout(90_000);

const SIZES = { desktop: { width: 1280, height: 800 }, phone: { width: 390, height: 844 } } as const;
const VIEWS: [keyof typeof SIZES, 'light' | 'dark'][] = [
  ['desktop', 'light'],
  ['phone', 'dark'],
  ['desktop', 'dark'],
  ['phone', 'light'],
];
const ADMIN = { username: 'ada', password: 'pw-ada-long-enough' }; // registered by the harness

const watch = new ConsoleWatch();
let harness: WebchatHarness;
let browser: Browser;

beforeAll(async () => {
  harness = await startWebchatHarness();
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await harness?.stop();
  removeTempDirs();
});

async function signIn(size: keyof typeof SIZES, theme: 'light' | 'dark'): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport: SIZES[size], colorScheme: theme });
  const page = watch.watch(await context.newPage());
  page.setDefaultTimeout(15_000);
  await page.goto(`${harness.base}/sign-in`);
  await page.getByRole('textbox', { name: 'Username' }).fill(ADMIN.username);
  await page.getByRole('textbox', { name: 'Password' }).fill(ADMIN.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(/\/sessions$/);
  return { context, page };
}

/** The hub's session of the widget's conversation whose first message is `text`, once its messages are stored. */
async function sessionWith(text: string, messages: number): Promise<string> {
  for (;;) {
    const sessions = (await harness.admin('GET', '/sessions?limit=100')).body.data.items as { id: string; channel: string }[];
    for (const session of sessions.filter((candidate) => candidate.channel === 'webchat')) {
      const items = (await harness.admin('GET', `/sessions/${session.id}/messages?limit=100`)).body.data.items as { content: string }[];
      if (items[0]?.content === text && items.length >= messages) return session.id;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const conversation = (page: Page) => page.getByRole('log', { name: 'Conversation' });

/** The conversation as a reader sees it: who says what, in order, and which questions wait. */
async function shown(page: Page): Promise<string[]> {
  return conversation(page)
    .locator('article')
    .evaluateAll((articles) =>
      articles.map((article) => {
        const text = article.querySelector('.bubble')?.textContent ?? '';
        return article.getAttribute('aria-label') === 'You' ? `${text}${article.querySelector('.queued-note') ? ' (queued)' : ''}` : `> ${text}`;
      }),
    );
}

/** Waits until the page shows exactly `expected` (live frames and history loads settle). */
async function until(page: Page, expected: string[]): Promise<void> {
  const deadline = Date.now() + 15_000;
  let last: string[] = [];
  while (Date.now() < deadline) {
    last = await shown(page);
    if (JSON.stringify(last) === JSON.stringify(expected)) return;
    await page.waitForTimeout(100);
  }
  expect(last).toEqual(expected);
}

describe.each(VIEWS)('at %s size in the %s theme', (size, theme) => {
  it('shows messages queued mid-turn once each, the waiting ones as Queued, live and after reloads', async () => {
    const tag = `${size}-${theme}`;
    harness.provider.pieces = [`Answer`, ` for you.`];
    harness.provider.pauseBefore = 1;
    const widget = await Widget.open(harness.base);
    try {
      widget.say(`first ${tag}`);
      await harness.provider.paused();
      widget.say(`second ${tag}`);
      widget.say(`third ${tag}`);
      const sessionId = await sessionWith(`first ${tag}`, 3);

      const { context, page } = await signIn(size, theme);
      await page.goto(`${harness.base}/sessions/${sessionId}`);
      const whileRunning = [`first ${tag}`, '> Answer', `second ${tag} (queued)`, `third ${tag} (queued)`];
      await until(page, whileRunning);
      await page.reload();
      await until(page, whileRunning);
      expect(
        await conversation(page)
          .getByText(/^Queued/)
          .count(),
      ).toBe(2);
      await screenshot(page, `queued-${tag}-while-first-turn-runs`);

      harness.provider.pauseBefore = null;
      harness.provider.release();
      const answered = [`first ${tag}`, '> Answer for you.', `second ${tag}`, '> Answer for you.', `third ${tag}`, '> Answer for you.'];
      await until(page, answered); // live
      await page.getByRole('status', { name: 'Agent: Ready' }).waitFor();
      await page.reload();
      await until(page, answered); // from the history, the replayed turns adding nothing
      await page.getByRole('status', { name: 'Agent: Ready' }).waitFor();
      await screenshot(page, `queued-${tag}-answered-after-reload`);
      await context.close();
      expect(watch.take()).toEqual([]);
    } finally {
      widget.close();
    }
  });
});
