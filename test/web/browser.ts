import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { REPO_ROOT } from '../helpers/process';

/** Debian's chromium (`.ci/run` installs it); browsers are never downloaded. */
export const CHROMIUM = process.env.SWITCHBOARD_CHROMIUM ?? '/usr/bin/chromium';
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Screenshots of every page, git-ignored, for a person to look at. */
export const SCREENSHOT_DIR = path.join(REPO_ROOT, 'web-screenshots');

export function launchBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium (see .ci/run)`);
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
}

/**
 * Console errors and uncaught page errors, collected per page. Chromium also logs a failed HTTP
 * status as a console error ("Failed to load resource"); those come from answers a test provokes on
 * purpose (422 on a bad workflow, 404 on a hub without an endpoint) and are judged by the test itself.
 */
export class ConsoleWatch {
  readonly errors: string[] = [];

  /** The errors collected since the last call. */
  take(): string[] {
    return this.errors.splice(0);
  }

  watch(page: Page): Page {
    page.on('console', (message) => {
      if (message.type() !== 'error') return;
      if (/^Failed to load resource: the server responded with a status of (401|404|409|422)/.test(message.text())) return;
      this.errors.push(`${page.url()}: ${message.text()}`);
    });
    page.on('pageerror', (error) => this.errors.push(`${page.url()}: uncaught ${error.message}`));
    return page;
  }
}

export async function newContext(browser: Browser, theme: 'dark' | 'light' = 'dark'): Promise<BrowserContext> {
  return browser.newContext({ viewport: { width: 1280, height: 820 }, colorScheme: theme });
}

export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  await page.screenshot({ path: path.join(SCREENSHOT_DIR, `${name}.png`) });
}

/** Signs in through the Web UI's form and waits for the sessions page it lands on. */
export async function signInThroughForm(page: Page, base: string, username: string, password: string): Promise<void> {
  await page.goto(`${base}/sign-in`);
  await page.getByRole('textbox', { name: 'Username' }).fill(username);
  await page.getByRole('textbox', { name: 'Password' }).fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(/\/sessions$/);
}
