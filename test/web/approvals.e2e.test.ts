import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { GENEROUS_RATE_LIMITS } from '../helpers/auth-service';
import { testEnv } from '../helpers/env';
import { jsonBody, request } from '../helpers/http';
import { readyUrl, spawnService, type ServiceProcess } from '../helpers/process';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir';
import { ConsoleWatch, launchBrowser, screenshot, signInThroughForm } from './browser';

/**
 * The Approvals page is live (issue 30): on the built hub with its builtin model, a request under an
 * approval policy appears on the approver's open page as it is made, another approver's click shows
 * as "1 of 2" and the approver's own decision removes it — without reloading the page, pushed over
 * `/ws/v1/approvals` (the page no longer polls: it reads the list only when the socket rings). The
 * requester's chat shows the progress as a status line after their dialog closed, never the dialog
 * again. Screenshots at 1280×800 and 390×844 in both themes.
 */
jest.setTimeout(90_000);

const PASSWORD = 'correct horse battery';
const SIZES = { desktop: { width: 1280, height: 800 }, phone: { width: 390, height: 844 } } as const;

const watch = new ConsoleWatch();
let hub: ServiceProcess;
let base: string;
let browser: Browser;
const tokens: Record<string, string> = {};

async function register(username: string): Promise<void> {
  const answer = await request(`${base}/api/v1/auth/register`, {
    method: 'POST',
    ...jsonBody({ username, email: `${username}@example.com`, password: PASSWORD }),
  });
  expect(answer.status).toBe(201);
  tokens[username] = answer.body.data.access_token as string;
}

const as = (username: string) => ({ authorization: `Bearer ${tokens[username]!}` });

beforeAll(async () => {
  const workDir = makeTempDir();
  hub = spawnService(testEnv(path.join(workDir, 'data'), GENEROUS_RATE_LIMITS), { cwd: workDir });
  base = await readyUrl(hub);
  for (const name of ['ada', 'bob', 'ann']) await register(name);
  const workflow = { name: 'notes', tool_list: 'write_file', approvals: [{ tools: ['write_file'], approvers: { users: ['ada', 'bob'] }, quorum: 2 }] };
  expect((await request(`${base}/api/v1/assistant/workflows`, jsonBody(workflow, as('ada')))).status).toBe(201);
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  hub?.child.kill('SIGTERM');
  await hub?.exited;
  removeTempDirs();
});

async function signIn(username: string, size: keyof typeof SIZES, theme: 'light' | 'dark'): Promise<Page> {
  const context = await browser.newContext({ viewport: SIZES[size], colorScheme: theme });
  const page = watch.watch(await context.newPage());
  page.setDefaultTimeout(10_000);
  await signInThroughForm(page, base, username, PASSWORD);
  return page;
}

/** Ann asks, in a session of her own, for a file write the `notes` workflow's policy governs. */
async function annAsks(file: string): Promise<{ sessionId: string; approvalId: string }> {
  const sessionId = (await request(`${base}/api/v1/sessions`, jsonBody({}, as('ann')))).body.data.id as string;
  const text = `write a file ${file} containing shipped`;
  expect((await request(`${base}/api/v1/sessions/${sessionId}/messages`, jsonBody({ text, metadata: { workflow: 'notes' } }, as('ann')))).status).toBe(202);
  for (let attempt = 0; attempt < 400; attempt += 1) {
    const pending = (await request(`${base}/api/v1/sessions/${sessionId}`, { headers: as('ann') })).body.data.pending_confirmation;
    if (pending?.approval) return { sessionId, approvalId: pending.confirmation_id as string };
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error('no approval was asked');
}

/** Until Ann's session is idle (its turn ended) and the page has made no read for a second. */
async function untilSettled(sessionId: string, reads: () => number): Promise<void> {
  for (let attempt = 0; (await request(`${base}/api/v1/sessions/${sessionId}`, { headers: as('ann') })).body.data.state !== 'idle'; attempt += 1) {
    if (attempt >= 400) throw new Error("Ann's turn did not end");
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  for (let last = -1; reads() !== last;) {
    last = reads();
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  }
}

/** Every GET /approvals the page makes (it reads the list on load and whenever the socket rings, never on a timer). */
function countListReads(page: Page): () => number {
  let reads = 0;
  page.on('request', (sent) => {
    if (sent.method() === 'GET' && new URL(sent.url()).pathname === '/api/v1/approvals') reads += 1;
  });
  return () => reads;
}

it('a new request, another approver’s click and a decision show on the open page at once', async () => {
  const page = await signIn('ada', 'desktop', 'dark');
  const reads = countListReads(page);
  await page.getByRole('link', { name: 'Approvals' }).click();
  await page.getByTestId('approvals-stream').getByText('Live').waitFor();
  await page.getByText('Nothing waits for you').waitFor();
  const before = reads();

  const { sessionId, approvalId } = await annAsks('live-one.txt');
  const row = page.getByRole('row').filter({ hasText: 'write_file' });
  await row.waitFor();
  await row.getByText('0 of 2').waitFor();
  // Bob approves over the API: the count changes on Ada's page.
  expect((await request(`${base}/api/v1/approvals/${approvalId}`, jsonBody({ action: 'allow' }, as('bob')))).body.data).toMatchObject({
    counted: true,
    decided: null,
  });
  await row.getByText('1 of 2').waitFor();
  await screenshot(page, 'approvals-desktop-dark');
  // The list was read once per change (the new request, Bob's click, and the tool's own events), not on a timer.
  expect(reads() - before).toBeGreaterThanOrEqual(2);

  // Ada decides on the page: it leaves the list, and the page keeps listening.
  await row.getByRole('button', { name: 'Allow', exact: true }).click();
  await page.getByText('Nothing waits for you').waitFor();
  const settled = (await request(`${base}/api/v1/approvals?state=approved`, { headers: as('ada') })).body.data.items;
  expect(settled.map((item: { id: string }) => item.id)).toContain(approvalId);
  // Ann's turn goes on after the decision (the tool runs, the turn ends) and its events are changes
  // the page reads on: let them pass first.
  await untilSettled(sessionId, reads);
  // Idle for longer than the old 5-second poll: no reads without a change.
  const quiet = reads();
  await page.waitForTimeout(6_000);
  expect(reads()).toBe(quiet);
  expect(watch.take()).toEqual([]);
  await page.context().close();
});

it('a decision made elsewhere removes the request from the open page', async () => {
  const page = await signIn('bob', 'desktop', 'light');
  await page.getByRole('link', { name: 'Approvals' }).click();
  await page.getByTestId('approvals-stream').getByText('Live').waitFor();
  const { approvalId } = await annAsks('decided-elsewhere.txt');
  const row = page.getByRole('row').filter({ hasText: 'decided-elsewhere.txt' });
  await row.waitFor();
  await screenshot(page, 'approvals-desktop-light');
  expect((await request(`${base}/api/v1/approvals/${approvalId}`, jsonBody({ action: 'deny' }, as('ada')))).body.data).toMatchObject({ decided: 'deny' });
  await row.waitFor({ state: 'detached' });
  expect(watch.take()).toEqual([]);
  await page.context().close();
});

it('the requester’s chat shows the approval’s progress without opening the dialog again', async () => {
  const page = await signIn('ann', 'desktop', 'dark');
  const sessionId = (await request(`${base}/api/v1/sessions`, jsonBody({}, as('ann')))).body.data.id as string;
  await page.goto(`${base}/sessions/${sessionId}`);
  await page.getByRole('textbox', { name: 'Message' }).waitFor();
  // The message goes to the `notes` workflow through the API: the page has no workflow picker for one message.
  expect(
    (
      await request(
        `${base}/api/v1/sessions/${sessionId}/messages`,
        jsonBody({ text: 'write a file progress.txt containing shipped', metadata: { workflow: 'notes' } }, as('ann')),
      )
    ).status,
  ).toBe(202);
  const dialog = page.getByRole('dialog');
  await dialog.waitFor();
  expect(await dialog.textContent()).toContain('Waiting for approval by @ada, @bob (0 of 2)');
  // Her own Allow is refused (a notice) and closes the dialog.
  await dialog.getByRole('button', { name: /^Allow y/ }).click();
  await dialog.waitFor({ state: 'detached' });
  await page.getByText('Your own request needs approval by someone else.').waitFor();
  const pending = (await request(`${base}/api/v1/sessions/${sessionId}`, { headers: as('ann') })).body.data.pending_confirmation;
  // Bob's click is re-sent to her as progress: a status line, not the dialog.
  await request(`${base}/api/v1/approvals/${pending.confirmation_id}`, jsonBody({ action: 'allow' }, as('bob')));
  await page.getByRole('status').filter({ hasText: 'Waiting for approval by @ada, @bob (1 of 2)' }).waitFor();
  expect(await page.getByRole('dialog').count()).toBe(0);
  await screenshot(page, 'approvals-chat-progress-dark');
  await request(`${base}/api/v1/approvals/${pending.confirmation_id}`, jsonBody({ action: 'allow' }, as('ada')));
  await page.getByRole('status').filter({ hasText: 'Waiting for approval' }).waitFor({ state: 'detached' });
  expect(await page.getByRole('dialog').count()).toBe(0);
  expect(watch.take().filter((error) => !error.includes('403'))).toEqual([]);
  await page.context().close();
});

it.each([
  ['phone', 'light'],
  ['phone', 'dark'],
  ['desktop', 'light'],
] as const)('looks right at %s size in the %s theme (screenshot)', async (size, theme) => {
  const page = await signIn('ada', size, theme);
  await page.goto(`${base}/approvals`);
  await page.getByTestId('approvals-stream').getByText('Live').waitFor();
  const { approvalId } = await annAsks(`shot-${size}-${theme}.txt`);
  await page
    .getByRole('row')
    .filter({ hasText: `shot-${size}-${theme}.txt` })
    .waitFor();
  await screenshot(page, `approvals-${size}-${theme}`);
  const sideways = await page.evaluate(
    () => (globalThis as any).document.documentElement.scrollWidth > (globalThis as any).document.documentElement.clientWidth,
  );
  expect(sideways).toBe(false);
  await request(`${base}/api/v1/approvals/${approvalId}`, jsonBody({ action: 'deny' }, as('ada')));
  await page.context().close();
});
