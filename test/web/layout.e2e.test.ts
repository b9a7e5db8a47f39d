import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { GENEROUS_RATE_LIMITS } from '../helpers/auth-service';
import { testEnv } from '../helpers/env';
import { jsonBody, request } from '../helpers/http';
import { readyUrl, spawnService, type ServiceProcess } from '../helpers/process';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir';
import { ConsoleWatch, launchBrowser, screenshot } from './browser';
import { lowContrastButtons, lowContrastText, readContrast, MIN_TEXT_CONTRAST } from './contrast';

/**
 * The shell at desktop (1280×800) and phone (390×844) size in both themes, on the built hub with no
 * SAML: contrast of every button at rest and hovered and of every text the pages show (links,
 * inputs and placeholders, badges, nav entries, tabs, status chips, chat bubbles; controls also
 * hovered and focused), the phone's menu, nothing wider than the screen, tables scrolling inside
 * themselves, and no SAML link on the sign-in page.
 */
jest.setTimeout(90_000);

const ADMIN = { username: 'grace', email: 'grace@example.com', password: 'correct horse battery' };
const SIZES = { desktop: { width: 1280, height: 800 }, phone: { width: 390, height: 844 } } as const;
const THEMES = ['light', 'dark'] as const;

const watch = new ConsoleWatch();
let hub: ServiceProcess;
let base: string;
let browser: Browser;
let chatPath: string;

beforeAll(async () => {
  const workDir = makeTempDir();
  hub = spawnService(testEnv(path.join(workDir, 'data'), GENEROUS_RATE_LIMITS), { cwd: workDir });
  base = await readyUrl(hub);
  const registered = await request(`${base}/api/v1/auth/register`, { method: 'POST', ...jsonBody(ADMIN) });
  const auth = { authorization: `Bearer ${registered.body.data.access_token as string}` };
  // Rows with long names, so the sessions table is wider than a phone.
  for (const name of ['Quarterly infrastructure review with the platform team', 'Incident 4711 follow-up and rollback rehearsal']) {
    expect((await request(`${base}/api/v1/sessions`, { method: 'POST', ...jsonBody({ name }, auth) })).status).toBe(201);
  }
  // A conversation with a tool call, a reply and its meta line, for the chat page's colours.
  const chat = await request(`${base}/api/v1/sessions`, { method: 'POST', ...jsonBody({ name: 'Colours' }, auth) });
  chatPath = `/sessions/${chat.body.data.id as string}`;
  const answered = await request(`${base}/api/v1${chatPath}/messages?sync=true`, { method: 'POST', ...jsonBody({ text: 'what time is it in Tokyo?' }, auth) });
  expect(answered.status).toBe(200);
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  hub?.child.kill('SIGTERM');
  await hub?.exited;
  removeTempDirs();
});

async function signedIn(size: keyof typeof SIZES, theme: (typeof THEMES)[number]): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport: SIZES[size], colorScheme: theme });
  const page = watch.watch(await context.newPage());
  page.setDefaultTimeout(10_000);
  await page.goto(`${base}/sign-in`);
  await page.getByRole('textbox', { name: 'Username' }).fill(ADMIN.username);
  await page.getByRole('textbox', { name: 'Password' }).fill(ADMIN.password);
  // SAML is off on this hub: the sign-in page does not offer it.
  await page.getByRole('button', { name: 'Sign in' }).waitFor();
  expect(await page.getByRole('link', { name: /SAML/ }).count()).toBe(0);
  await screenshot(page, `layout-${size}-${theme}-sign-in`);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(/\/sessions$/);
  await page.getByRole('table').waitFor();
  return { context, page };
}

/** Elements sticking out past the right edge of the screen, outside any scroll container of their own. */
async function overflowing(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const window = globalThis as any;
    const document = window.document;
    const width = document.documentElement.clientWidth;
    const found: string[] = [];
    if (document.documentElement.scrollWidth > width) {
      const wide = (Array.from(document.querySelectorAll('body *')) as any[])
        .filter((element) => element.getBoundingClientRect().right > width + 1)
        .map((element) => `${element.tagName.toLowerCase()}.${String(element.className)}`)
        .slice(0, 8);
      found.push(`the page scrolls sideways (${document.documentElement.scrollWidth} > ${width}): ${wide.join(' ')}`);
    }
    const main = document.querySelector('main');
    if (main && main.scrollWidth > main.clientWidth) found.push(`main scrolls sideways (${main.scrollWidth} > ${main.clientWidth})`);
    const scrolls = (element: any) => ['auto', 'scroll', 'hidden'].includes(window.getComputedStyle(element).overflowX);
    for (const element of Array.from(document.querySelectorAll('body *')) as any[]) {
      const box = element.getBoundingClientRect();
      if (box.width === 0 || box.right <= width + 1) continue;
      // Inside a container that scrolls (or clips) by itself, below the page: fine.
      let clipped = false;
      for (let parent = element.parentElement; parent && parent !== document.body && !clipped; parent = parent.parentElement) {
        clipped = parent.tagName !== 'MAIN' && scrolls(parent) && parent.getBoundingClientRect().right <= width + 1;
      }
      if (!clipped) found.push(`${element.tagName.toLowerCase()}.${String(element.className)} right edge ${Math.round(box.right)}`);
    }
    return found;
  });
}

/** The pages a new user opens, each waited for by something it shows. */
const PAGES: [string, (page: Page) => Promise<void>][] = [
  ['/sessions', (page) => page.getByRole('table').waitFor()],
  ['chat', (page) => page.getByRole('article', { name: 'Agent' }).first().waitFor()],
  ['/workflows', (page) => page.getByRole('heading', { name: 'Workflows' }).first().waitFor()],
  ['/knowledge', (page) => page.getByRole('heading', { name: 'Knowledge' }).first().waitFor()],
  ['/api-keys', (page) => page.getByRole('heading', { name: 'API keys' }).first().waitFor()],
  ['/admin/users', (page) => page.getByRole('table').waitFor()],
  ['/admin/channels', (page) => page.getByRole('button', { name: 'Test the web connection' }).waitFor()],
];

describe.each(THEMES)('the shell in the %s theme', (theme) => {
  it('keeps every text readable: links, inputs, badges, nav entries, tabs, chips, at rest, hovered and focused', async () => {
    const context = await browser.newContext({ viewport: SIZES.desktop, colorScheme: theme });
    const page = watch.watch(await context.newPage());
    page.setDefaultTimeout(10_000);
    await page.goto(`${base}/sign-in`);
    await page.getByRole('textbox', { name: 'Username' }).waitFor();
    const failures: unknown[] = (await lowContrastText(page)).map((failure) => ({ page: '/sign-in', ...failure }));
    await page.getByRole('textbox', { name: 'Username' }).fill(ADMIN.username);
    await page.getByRole('textbox', { name: 'Password' }).fill(ADMIN.password);
    failures.push(...(await lowContrastText(page, 'form', { states: false })).map((failure) => ({ page: '/sign-in filled', ...failure })));
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/\/sessions$/);
    for (const [route, ready] of PAGES) {
      await page.goto(`${base}${route === 'chat' ? chatPath : route}`);
      await ready(page);
      failures.push(...(await lowContrastText(page)).map((failure) => ({ page: route, ...failure })));
      await screenshot(page, `contrast-desktop-${theme}-${route.replace(/\W+/g, '-').replace(/^-/, '')}`);
    }
    expect(failures).toEqual([]);
    await context.close();
    expect(watch.take()).toEqual([]);
  });

  it('keeps every button readable (at rest and hovered) at desktop size', async () => {
    const { context, page } = await signedIn('desktop', theme);
    const primary = page.getByRole('button', { name: 'New session' });
    await primary.hover();
    expect((await readContrast(primary)).ratio).toBeGreaterThanOrEqual(MIN_TEXT_CONTRAST);
    await screenshot(page, `layout-desktop-${theme}-primary-hover`);
    expect(await lowContrastButtons(page.locator('.btn'))).toEqual([]);
    expect(await overflowing(page)).toEqual([]);
    expect(await page.getByRole('button', { name: /menu/i }).isVisible()).toBe(false);
    expect(await page.getByRole('button', { name: 'Sign out' }).isVisible()).toBe(true);
    await context.close();
    expect(watch.take()).toEqual([]);
  });

  it('fits a phone: a menu button opens the navigation and Sign out, tables scroll inside themselves', async () => {
    const { context, page } = await signedIn('phone', theme);
    await screenshot(page, `layout-phone-${theme}-sessions`);
    expect(await overflowing(page)).toEqual([]);
    const table = page.getByRole('table');
    const scroll = await table.evaluate((node) => ({
      scrollWidth: node.scrollWidth,
      clientWidth: node.clientWidth,
      right: node.getBoundingClientRect().right,
    }));
    expect(scroll.right).toBeLessThanOrEqual(SIZES.phone.width);
    expect(scroll.scrollWidth).toBeGreaterThan(scroll.clientWidth); // the long rows scroll inside the table

    expect(await lowContrastButtons(page.locator('main .btn, .menu-button'))).toEqual([]);
    const signOut = page.getByRole('button', { name: 'Sign out' });
    expect(await signOut.isVisible()).toBe(false);
    await page.getByRole('button', { name: 'Open menu' }).click();
    for (const name of ['Chat', 'Workflows', 'Events', 'Knowledge', 'API keys', 'Admin']) {
      const link = page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name });
      expect(await link.isVisible()).toBe(true);
      expect((await link.boundingBox())!.x + (await link.boundingBox())!.width).toBeLessThanOrEqual(SIZES.phone.width);
    }
    const box = (await signOut.boundingBox())!;
    expect(box.y + box.height).toBeLessThanOrEqual(SIZES.phone.height);
    expect(box.x + box.width).toBeLessThanOrEqual(SIZES.phone.width);
    await screenshot(page, `layout-phone-${theme}-menu-open`);
    // The open menu covers the page: its own buttons are the ones to read.
    expect(await lowContrastButtons(page.locator('#sidebar-panel .btn'))).toEqual([]);
    // …and every text of it: nav entries (the current one included), the user's name and role, hovered and focused.
    expect(await lowContrastText(page, '#sidebar-panel')).toEqual([]);

    // Following a link closes the menu.
    await page.getByRole('link', { name: 'API keys' }).click();
    await page.waitForURL(/\/api-keys$/);
    await signOut.waitFor({ state: 'hidden' });
    expect(await overflowing(page)).toEqual([]);
    await screenshot(page, `layout-phone-${theme}-api-keys`);

    // The Events tab (no workflow declares events here: its empty state and the deliveries card).
    await page.getByRole('button', { name: 'Open menu' }).click();
    await page.getByRole('link', { name: 'Events' }).click();
    await page.waitForURL(/\/events$/);
    await page.getByRole('heading', { name: 'No webhooks or schedules yet' }).waitFor();
    expect(await overflowing(page)).toEqual([]);
    const guide = await readContrast(page.getByRole('link', { name: 'Events: webhooks and schedules' }));
    expect(guide.ratio).toBeGreaterThanOrEqual(MIN_TEXT_CONTRAST);
    await screenshot(page, `layout-phone-${theme}-events`);

    await page.getByRole('button', { name: 'Open menu' }).click();
    await signOut.click();
    await page.waitForURL(/\/sign-in$/);
    await context.close();
    expect(watch.take()).toEqual([]);
  });
});
