import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { GENEROUS_RATE_LIMITS } from '../helpers/auth-service';
import { testEnv } from '../helpers/env';
import { readyUrl, spawnService, type ServiceProcess } from '../helpers/process';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir';
import { TEST_SERVER } from '../mcp/mcp-servers';
import { ConsoleWatch, launchBrowser, newContext, screenshot, signInThroughForm } from './browser';

/**
 * Admin → MCP servers in the browser: a hub process with our test MCP server, the server's state
 * and tools, a restart, and a changed tool definition approved with its button.
 */
jest.setTimeout(60_000);

const watch = new ConsoleWatch();
let hub: ServiceProcess;
let base: string;
let browser: Browser;
let page: Page;
let serverDir: string;

beforeAll(async () => {
  const workDir = makeTempDir();
  serverDir = makeTempDir();
  writeFileSync(
    path.join(workDir, 'config.yaml'),
    `mcp:\n  servers:\n    test:\n      command: ${JSON.stringify(process.execPath)}\n      args: [${JSON.stringify(TEST_SERVER)}]\n      env: { MCP_TEST_DIR: ${JSON.stringify(serverDir)} }\n      confirm: read_only_auto\n`,
  );
  hub = spawnService(testEnv(path.join(workDir, 'data'), { ...GENEROUS_RATE_LIMITS }), { cwd: workDir });
  base = await readyUrl(hub);
  const registered = await fetch(`${base}/api/v1/auth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'ada', email: 'ada@example.com', password: 'correct horse battery' }),
  });
  expect(registered.status).toBe(201);
  browser = await launchBrowser();
  page = watch.watch(await (await newContext(browser)).newPage());
  page.setDefaultTimeout(15_000);
});

afterAll(async () => {
  await browser?.close();
  hub?.child.kill('SIGTERM');
  await hub?.exited;
  removeTempDirs();
});

it('shows the MCP servers, restarts one and approves a changed tool', async () => {
  await signInThroughForm(page, base, 'ada', 'correct horse battery');
  await page.getByRole('link', { name: 'Admin' }).click();
  await page.getByRole('link', { name: 'MCP servers' }).click();
  const server = page.getByRole('region', { name: 'MCP server test' });
  await server.getByText('ready').waitFor();
  await server.getByRole('cell', { name: 'test__echo' }).waitFor();
  const echoRow = server.getByRole('row').filter({ hasText: 'test__echo' });
  expect(await echoRow.textContent()).toContain('runs without asking');
  expect(await server.getByRole('row').filter({ hasText: 'test__slow' }).textContent()).toContain('asks');
  await screenshot(page, 'dark-22-admin-mcp');

  writeFileSync(path.join(serverDir, 'description.txt'), 'A different description.');
  await server.getByRole('button', { name: 'Restart' }).click();
  const shifty = server.getByRole('row').filter({ hasText: 'test__shifty' });
  await shifty.getByText('changed').waitFor();
  await shifty.getByRole('button', { name: 'Approve' }).click();
  await shifty.getByText('pinned').waitFor();
  expect(await server.textContent()).toContain('restarts: 1');
  expect(watch.take()).toEqual([]);
});
