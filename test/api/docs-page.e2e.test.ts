import type { Browser } from 'playwright-core';
import { startTestApp, type TestApp } from '../helpers/http';
import { removeTempDirs } from '../helpers/temp-dir';
import { ConsoleWatch, launchBrowser, newContext } from '../web/browser';

/**
 * Swagger UI at /api/v1/docs/ carries the same security headers as the web UI (issue 26): a CSP
 * that allows only this origin and no framing — and the page still works under it in a real browser
 * (Debian's Chromium, headless), with nothing refused in the console.
 */
jest.setTimeout(60_000);

let app: TestApp;
let browser: Browser;

beforeAll(async () => {
  app = await startTestApp();
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await app?.close();
  removeTempDirs();
});

it('sends the CSP, no-framing and nosniff headers on the page and its files', async () => {
  for (const path of ['/api/v1/docs/', '/api/v1/docs/swagger-ui-init.js']) {
    const response = await fetch(`${app.url}${path}`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-security-policy')).toMatch(/default-src 'self'.*connect-src 'self'.*frame-ancestors 'none'/);
    expect(response.headers.get('x-frame-options')).toBe('DENY');
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
  }
});

it('renders the API description under that CSP, with a clean console', async () => {
  const watch = new ConsoleWatch();
  const page = watch.watch(await (await newContext(browser, 'light')).newPage());
  const violations: string[] = [];
  page.on('console', (message) => {
    if (/Content Security Policy|Refused to/i.test(message.text())) violations.push(message.text());
  });
  await page.goto(`${app.url}/api/v1/docs/`);
  await page.getByText('Switchboard API', { exact: false }).first().waitFor({ timeout: 15_000 });
  await page.locator('.opblock').first().waitFor({ timeout: 15_000 });
  expect(violations).toEqual([]);
  expect(watch.take()).toEqual([]);
});
