import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { FakeOpenAiServer, openAiChunk, openAiTextReply } from '../fakes/openai-server';
import type { ScriptedReply } from '../fakes/scripted-http-server';
import { GENEROUS_RATE_LIMITS } from '../helpers/auth-service';
import { testEnv } from '../helpers/env';
import { readyUrl, spawnService, type ServiceProcess } from '../helpers/process';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir';
import { ConsoleWatch, launchBrowser, newContext, screenshot } from './browser';

/**
 * The web UI end to end: the built hub (`node dist/src/main.js`, serving dist/web at `/`) with a fake
 * OpenAI-compatible model that scripts tokens and tool calls, driven by Debian's chromium. Tests run
 * in order and share one browser tab, as a person would use the UI; each saves screenshots.
 */
jest.setTimeout(60_000);

const model = new FakeOpenAiServer();
const watch = new ConsoleWatch();
let hub: ServiceProcess;
let base: string;
let workDir: string;
let browser: Browser;
let context: BrowserContext;
let page: Page;

const ADMIN = { username: 'ada', email: 'ada@example.com', password: 'correct horse battery' };

beforeAll(async () => {
  const modelUrl = await model.start();
  workDir = makeTempDir();
  writeFileSync(path.join(workDir, 'config.yaml'), 'llm:\n  max_retries: 0\n');
  hub = spawnService(
    testEnv(path.join(workDir, 'data'), {
      ...GENEROUS_RATE_LIMITS,
      SERVICE_LLM_PROVIDER: 'openai',
      SERVICE_LLM_BASE_URL: modelUrl,
      SERVICE_LLM_MODEL: 'fake-model',
      SERVICE_LLM_API_KEY: 'sk-test',
    }),
    { cwd: workDir },
  );
  base = await readyUrl(hub);
  browser = await launchBrowser();
  context = await newContext(browser);
  page = watch.watch(await context.newPage());
  page.setDefaultTimeout(10_000);
});

afterEach(() => {
  expect(watch.take()).toEqual([]);
});

afterAll(async () => {
  await browser?.close();
  hub?.child.kill('SIGTERM');
  await hub?.exited;
  await model.stop();
  removeTempDirs();
});

const conversation = () => page.getByRole('log', { name: 'Conversation' });

/** A model turn that streams `pieces`, `delayMs` apart. */
const slowText = (pieces: string[], delayMs: number): ScriptedReply => ({
  ...(openAiTextReply(pieces) as Extract<ScriptedReply, { kind: 'stream' }>),
  delayMs,
});

/** A model turn that calls one tool. */
function toolCall(id: string, name: string, input: Record<string, unknown>): ScriptedReply {
  return {
    kind: 'stream',
    events: [
      openAiChunk.delta({ role: 'assistant', content: '' }),
      openAiChunk.toolCall({ index: 0, id, type: 'function', function: { name, arguments: JSON.stringify(input) } }),
      openAiChunk.finish('tool_calls'),
      openAiChunk.usage(20, 5),
      openAiChunk.done(),
    ],
  };
}

async function send(text: string): Promise<void> {
  await page.getByRole('textbox', { name: 'Message' }).fill(text);
  await page.getByRole('button', { name: 'Send' }).click();
}

describe('the web UI', () => {
  it('is served at / with history fallback, never over /api or /ws', async () => {
    const home = await fetch(`${base}/`);
    expect(home.status).toBe(200);
    expect(home.headers.get('content-type')).toMatch(/text\/html/);
    expect(home.headers.get('content-security-policy')).toContain("default-src 'self'");
    const deep = await fetch(`${base}/sessions/123`, { headers: { accept: 'text/html' } });
    expect(await deep.text()).toContain('<div id="root">');
    const api = await fetch(`${base}/api/v1/no-such-endpoint`, { headers: { accept: 'text/html' } });
    expect(api.status).toBe(404);
    expect(((await api.json()) as { error: { code: string } }).error.code).toBe('NOT_FOUND');
    expect((await fetch(`${base}/assets/missing.js`)).status).toBe(404);
    expect((await fetch(`${base}/ws/v1/logs`, { headers: { accept: 'text/html' } })).headers.get('content-type')).toMatch(/json/);
  });

  it('registers the first user as admin, signs out and signs in again', async () => {
    await page.goto(`${base}/`);
    await page.waitForURL(/\/sign-in$/);
    await screenshot(page, 'dark-01-sign-in');
    await page.getByRole('tab', { name: 'Create account' }).click();
    await page.getByText('first account becomes the administrator').waitFor();
    await page.getByRole('textbox', { name: 'Username' }).fill(ADMIN.username);
    await page.getByRole('textbox', { name: 'Email' }).fill(ADMIN.email);
    await page.getByRole('textbox', { name: 'Password' }).fill('short');
    await page.getByRole('button', { name: 'Register' }).click();
    // The hub's 422, shown at the field it concerns.
    await page
      .getByText(/at least 8/i)
      .first()
      .waitFor();
    await screenshot(page, 'dark-02-register-error');
    await page.getByRole('textbox', { name: 'Password' }).fill(ADMIN.password);
    await page.getByRole('button', { name: 'Register' }).click();
    await page.waitForURL(/\/sessions$/);
    await page.getByText('you are its administrator').waitFor();
    await page.getByText('No sessions yet').waitFor();
    await screenshot(page, 'dark-03-sessions-empty');

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(/\/sign-in$/);
    await page.getByRole('textbox', { name: 'Username' }).fill(ADMIN.username);
    await page.getByRole('textbox', { name: 'Password' }).fill('wrong password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page
      .getByRole('alert')
      .filter({ hasText: /invalid|incorrect|wrong/i })
      .waitFor();
    await page.getByRole('textbox', { name: 'Password' }).fill(ADMIN.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/\/sessions$/);
    await page.getByRole('link', { name: 'Admin' }).waitFor();
  });

  it('keeps the refresh token out of script reach and refreshes from its cookie (issue 26)', async () => {
    const stored = (await page.evaluate('localStorage.getItem("switchboard.auth")')) as string;
    expect(stored).not.toContain('refresh_token');
    const cookie = (await page.context().cookies()).find((entry) => entry.name === 'switchboard_refresh');
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/api/v1/auth/refresh' });
    expect(await page.evaluate('document.cookie')).not.toContain('switchboard_refresh');
    // The access token runs out: the next request refreshes from the cookie and the user stays in.
    await page.evaluate(
      '(() => { const a = JSON.parse(localStorage.getItem("switchboard.auth")); a.expires_at = 0; localStorage.setItem("switchboard.auth", JSON.stringify(a)); })()',
    );
    await page.goto(`${base}/sessions`);
    await page.getByRole('link', { name: 'Admin' }).waitFor();
    // A function, not a string: the page's CSP refuses eval.
    await page.waitForFunction(() => JSON.parse((globalThis as any).localStorage.getItem('switchboard.auth')).expires_at > Date.now());
  });

  it('never swaps the signed-in user for one a link carries (login CSRF, issue 26)', async () => {
    // Another account's own tokens, in the fragment the hub used to send, and a hand-off this tab did not start.
    const mallory = (await (
      await fetch(`${base}/api/v1/auth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username: 'mallory', email: 'mallory@example.com', password: 'mallory-password-1' }),
      })
    ).json()) as { data: { access_token: string; refresh_token: string } };
    for (const fragment of [
      `access_token=${mallory.data.access_token}&refresh_token=${mallory.data.refresh_token}&token_type=bearer&expires_in=900`,
      'saml_code=forged-code&state=forged-state',
    ]) {
      // As a link from elsewhere arrives: a fresh page load.
      await page.goto('about:blank');
      await page.goto(`${base}/sessions#${fragment}`);
      await page.getByRole('link', { name: 'Admin' }).waitFor();
      await page.waitForFunction(() => (globalThis as any).location.hash === '');
      expect(JSON.parse((await page.evaluate('localStorage.getItem("switchboard.auth")')) as string).user.username).toBe(ADMIN.username);
    }
  });

  it('creates a session and streams a reply token by token', async () => {
    await page.getByRole('button', { name: 'New session' }).first().click();
    await page.waitForURL(/\/sessions\/[0-9a-f-]{36}$/);
    await page.getByText('Say hello').waitFor();
    await screenshot(page, 'dark-04-chat-empty');
    model.enqueue(slowText(['Hello', ' from', ' the', ' fake', ' model', '.'], 250));
    await send('Hello there');
    await conversation().getByText('Hello from', { exact: false }).waitFor();
    // Part of the reply is on screen before the rest has been generated: it streamed.
    expect(await conversation().textContent()).not.toContain('Hello from the fake model.');
    await page.getByRole('status', { name: /Agent: (Thinking|Writing)/ }).waitFor();
    await conversation().getByText('Hello from the fake model.').waitFor();
    await page.getByRole('status', { name: 'Agent: Ready' }).waitFor();
    await conversation()
      .getByText(/tokens ·/)
      .waitFor();
    await screenshot(page, 'dark-05-chat-reply');
  });

  it('asks for a tool confirmation at once and takes the answer from a click', async () => {
    model.enqueue(toolCall('call_1', 'write_file', { path: 'notes.txt', content: 'remember the milk' }), slowText(['Saved ', 'notes.txt.'], 20));
    await send('write a file notes.txt containing remember the milk');
    const dialog = page.getByRole('dialog');
    await dialog.waitFor();
    expect(await dialog.textContent()).toContain('write_file');
    expect(await dialog.textContent()).toContain('remember the milk');
    for (const name of [/^Allow y$/, /^Deny n$/, /^Allow all a$/, /^Disable d$/, /^Forbid all f$/, /^Cancel c$/]) {
      expect(await dialog.getByRole('button', { name }).count()).toBe(1);
    }
    await screenshot(page, 'dark-06-tool-confirmation');
    await dialog.getByRole('button', { name: /^Allow y$/ }).click();
    await dialog.waitFor({ state: 'detached' });
    await conversation().getByText('Saved notes.txt.').waitFor();
    await conversation()
      .getByText(/write_file/)
      .first()
      .waitFor();
    expect(existsSync(path.join(workDir, 'data', 'workspace', 'notes.txt'))).toBe(true);
    await page.getByRole('status', { name: 'Agent: Ready' }).waitFor();
    await screenshot(page, 'dark-07-tool-done');
  });

  it('takes a confirmation answer from the keyboard (n denies)', async () => {
    model.enqueue(toolCall('call_2', 'write_file', { path: 'secret.txt', content: 'nope' }), slowText(['Understood, ', 'nothing written.'], 20));
    await send('write secret.txt');
    await page.getByRole('dialog').waitFor();
    await page.keyboard.press('n');
    await page.getByRole('dialog').waitFor({ state: 'detached' });
    await conversation().getByText('Understood, nothing written.').waitFor();
    expect(existsSync(path.join(workDir, 'data', 'workspace', 'secret.txt'))).toBe(false);
  });

  it('resumes a reply after a reload mid-turn, without duplicating anything', async () => {
    const words = ['one ', 'two ', 'three ', 'four ', 'five ', 'six ', 'seven ', 'eight ', 'nine ', 'ten.'];
    model.enqueue(slowText(words, 300));
    await send('count to ten');
    await conversation().getByText('one two three', { exact: false }).waitFor();
    await page.reload();
    await conversation().getByText('one two three four five six seven eight nine ten.').waitFor({ timeout: 15_000 });
    await page.getByRole('status', { name: 'Agent: Ready' }).waitFor();
    const text = (await conversation().textContent()) ?? '';
    expect(text.split('one two three').length - 1).toBe(1);
    expect(text.split('count to ten').length - 1).toBe(1);
    await screenshot(page, 'dark-08-chat-after-reload');
  });

  it('cancels a running turn', async () => {
    model.enqueue({ kind: 'stream', events: [openAiChunk.delta({ role: 'assistant', content: '' }), openAiChunk.text('Thinking about it')], hang: true });
    await send('take your time');
    await conversation().getByText('Thinking about it').waitFor();
    const cancel = page.getByRole('button', { name: 'Cancel turn' });
    await cancel.click();
    await conversation().getByText('Cancelled.').waitFor();
    await page.getByRole('status', { name: 'Agent: Ready' }).waitFor();
    expect(await cancel.isDisabled()).toBe(true);
    await screenshot(page, 'dark-09-chat-cancelled');
  });

  it('runs in-chat commands as typed', async () => {
    await send('/info');
    await conversation()
      .getByText(/workflow/i)
      .last()
      .waitFor();
    await page.getByRole('status', { name: 'Agent: Ready' }).waitFor();
  });

  it('tells the replaced tab why when the session is opened in a second tab', async () => {
    const second = watch.watch(await context.newPage());
    await second.goto(page.url());
    await second.getByRole('log', { name: 'Conversation' }).waitFor();
    await page.getByText('opened in another tab or window').waitFor();
    await screenshot(page, 'dark-10-chat-replaced');
    await second.close();
    await page.getByRole('button', { name: 'Use it here' }).click();
    await page.getByText('opened in another tab or window').waitFor({ state: 'detached' });
  });

  it('lists, renames, archives and restores sessions', async () => {
    await page.getByRole('link', { name: 'Chat' }).click();
    await page.waitForURL(/\/sessions$/);
    const row = page.getByRole('row').nth(1);
    await row.getByRole('button', { name: /^Rename/ }).click();
    await page.getByRole('textbox', { name: 'Session name' }).fill('Release planning');
    await page.getByRole('button', { name: 'Save name' }).click();
    await page.getByRole('link', { name: 'Release planning' }).waitFor();
    await screenshot(page, 'dark-11-sessions');
    await page.getByRole('button', { name: 'Archive Release planning' }).click();
    await page.getByText('No sessions yet').waitFor();
    await page.getByRole('checkbox', { name: 'Show archived' }).check();
    await page.getByRole('button', { name: 'Restore Release planning' }).click();
    await page.getByRole('link', { name: 'Release planning' }).waitFor();
  });

  it('edits a workflow as YAML, shows errors at their lines, and explains routing', async () => {
    await page.getByRole('link', { name: 'Workflows' }).click();
    await page.getByText('No workflows yet').waitFor();
    await screenshot(page, 'dark-12-workflows-empty');
    await page.getByRole('link', { name: 'New workflow' }).click();
    const editor = page.getByRole('textbox', { name: 'Workflow YAML' });
    // A syntax error is shown as you type, at its line.
    await editor.fill('name: billing\ntriggers: [oops\n');
    await page
      .getByRole('alert', { name: 'Problems' })
      .getByRole('button', { name: /^Line \d+$/ })
      .first()
      .waitFor();
    // The hub's 422 (an unsafe regex, an unknown tool) at the lines they concern.
    const yaml = [
      'name: billing',
      'description: Invoices and refunds',
      'tool_list: calculator, no_such_tool',
      'binding_channels:',
      '  - web',
      'triggers:',
      '  keywords:',
      '    - refund',
      '    - invoice',
      '  regex:',
      "    - '(a+)+$'",
      'system_prompt: |',
      '  You handle billing questions.',
      '',
    ].join('\n');
    await editor.fill(yaml);
    await page.getByRole('button', { name: 'Create workflow' }).click();
    const problems = page.getByRole('alert', { name: 'Problems' });
    await problems.getByText('triggers.regex.0').waitFor();
    expect(await problems.locator('li', { hasText: 'triggers.regex.0' }).getByRole('button').textContent()).toBe('Line 11');
    await screenshot(page, 'dark-13-workflow-errors');
    await editor.fill(yaml.replace("'(a+)+$'", "'\\binv-\\d{4,}\\b'"));
    await page.getByRole('button', { name: 'Create workflow' }).click();
    await problems.getByText('No such tool: no_such_tool.').waitFor();
    expect(await problems.locator('li', { hasText: 'tool_list' }).getByRole('button').textContent()).toBe('Line 3');
    await editor.fill(yaml.replace(', no_such_tool', '').replace("'(a+)+$'", "'\\binv-\\d{4,}\\b'"));
    await page.getByRole('button', { name: 'Create workflow' }).click();
    await page.waitForURL(/\/workflows\/billing$/);
    await page.getByRole('heading', { name: 'billing' }).waitFor();
    await screenshot(page, 'dark-14-workflow-editor');

    await page.getByRole('link', { name: '← Workflows' }).click();
    await page.getByRole('link', { name: 'billing' }).waitFor();
    await page.getByRole('textbox', { name: 'Test message' }).fill('I need a refund for INV-20931');
    await page.getByRole('combobox', { name: 'Channel' }).fill('web');
    await page.getByRole('button', { name: 'Test routing' }).click();
    const result = page.getByLabel('Routing result');
    await result.getByText('"billing" has the highest trigger score (3) among the workflows bound to web.').waitFor();
    await screenshot(page, 'dark-15-workflows-routing-test');
    await page.getByRole('combobox', { name: 'Channel' }).fill('telegram');
    await page.getByRole('button', { name: 'Test routing' }).click();
    await result.getByText(/No workflow is bound to telegram/).waitFor();
  });

  it('runs the edited workflow’s test cases in the Tests panel, unsaved changes included (issue 32)', async () => {
    await page.getByRole('link', { name: 'billing' }).click();
    await page.getByRole('heading', { name: 'billing' }).waitFor();
    const cases = page.getByRole('textbox', { name: 'Test cases (YAML)' });
    await cases.fill(
      [
        '- name: an invoice number goes to billing',
        '  message: where is INV-20931?',
        '  expect: {workflow: billing, reason: trigger}',
        '- name: small talk does not',
        '  message: good morning',
        '  expect: {workflow: null}',
      ].join('\n'),
    );
    await page.getByRole('button', { name: 'Run tests' }).click();
    const results = page.getByLabel('Test results');
    await results.getByText('All passed').waitFor();
    expect(await results.getByRole('row').nth(1).textContent()).toContain('billing by trigger');
    await screenshot(page, 'dark-15b-workflow-tests');
    // The draft, not the stored workflow: without its regex the invoice number no longer routes to billing.
    const editor = page.getByRole('textbox', { name: 'Workflow YAML' });
    await editor.fill((await editor.inputValue()).replace(/  regex:\n    - .*\n/, '  regex: []\n'));
    await page.getByRole('button', { name: 'Run tests' }).click();
    await results.getByText('1 failed').waitFor();
    expect(await results.getByRole('row').nth(1).textContent()).toContain('routed to the default (default), expected "billing"');
    await page.getByRole('button', { name: 'Revert' }).click();
  });

  it('creates a knowledge collection, uploads with progress and searches', async () => {
    await page.getByRole('link', { name: 'Knowledge' }).click();
    await page.getByText('No collections yet').waitFor();
    await page.getByRole('textbox', { name: 'New collection name' }).fill('runbooks');
    await page.getByRole('button', { name: 'Create collection' }).click();
    await page.getByRole('heading', { name: 'Add a document to runbooks' }).waitFor();
    await page.getByLabel('Document file').setInputFiles({
      name: 'deploys.md',
      mimeType: 'text/markdown',
      buffer: Buffer.from('# Deploys\n\nRoll back a deploy with `ship rollback`. Deploys freeze on Fridays.\n'),
    });
    await page.getByRole('button', { name: 'Upload' }).click();
    await page.getByText(/Added: Deploys|Added: deploys/).waitFor();
    await page.getByRole('searchbox', { name: 'Search query' }).fill('deploys freeze');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await page
      .getByRole('list', { name: 'Search results' })
      .getByText(/freeze on Fridays/)
      .waitFor();
    await screenshot(page, 'dark-16-knowledge');
  });

  it('creates an API key shown once, lists and revokes it', async () => {
    await page.getByRole('link', { name: 'API keys' }).click();
    await page.getByText('No API keys yet').waitFor();
    await page.getByRole('textbox', { name: 'Key label' }).fill('deploy bot');
    await page.getByRole('button', { name: 'Create key' }).click();
    const key = await page.getByRole('textbox', { name: 'New API key' }).inputValue();
    expect(key).toMatch(/^svc_live_/);
    await screenshot(page, 'dark-17-api-key-created');
    await page.getByRole('button', { name: 'I have stored it' }).click();
    const me = await fetch(`${base}/api/v1/auth/me`, { headers: { authorization: `Bearer ${key}` } });
    expect(me.status).toBe(200);
    await page.getByRole('button', { name: 'Revoke deploy bot' }).click();
    await page.getByRole('button', { name: 'Revoke key' }).click();
    await page.getByText('revoked').waitFor();
    await screenshot(page, 'dark-18-api-keys');
    expect((await fetch(`${base}/api/v1/auth/me`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(401);
  });

  it('shows users, channel status and the live log stream to an admin', async () => {
    await page.getByRole('link', { name: 'Admin' }).click();
    await page.getByRole('cell', { name: /ada/ }).first().waitFor();
    expect(await page.getByRole('combobox', { name: 'Role of ada' }).isDisabled()).toBe(true); // not on yourself
    await page.getByRole('button', { name: 'Add a user' }).click();
    await page.getByRole('textbox', { name: 'New user’s username' }).fill('bob');
    await page.getByRole('textbox', { name: 'New user’s email' }).fill('bob@example.com');
    await page.getByLabel('Initial password').fill('another long password');
    await page.getByRole('button', { name: 'Create user' }).click();
    await page.getByRole('combobox', { name: 'Role of bob' }).selectOption('admin');
    // A click, not uncheck(): the box shows the hub's answer, which may come after Playwright's own check of it.
    await page.getByRole('checkbox', { name: 'bob is active' }).click();
    await page.locator('tr.dimmed', { hasText: 'bob' }).waitFor();
    expect(await page.getByRole('combobox', { name: 'Role of bob' }).inputValue()).toBe('admin');
    await screenshot(page, 'dark-19-admin-users');
    await page.getByRole('link', { name: 'Channels' }).click();
    await page
      .getByText(/Channel status is not available on this hub version|Telegram|telegram/)
      .first()
      .waitFor();
    await screenshot(page, 'dark-20-admin-channels');
    await page.getByRole('link', { name: 'Live logs' }).click();
    await page.getByRole('status').filter({ hasText: 'Live' }).waitFor();
    // Any request is logged; this one names a path to search for.
    await fetch(`${base}/api/v1/openapi.json?probe=e2e`);
    const lines = page.getByRole('log', { name: 'Log lines' });
    await lines
      .getByText(/GET \/api\/v1\/openapi\.json 200/)
      .first()
      .waitFor();
    await page.getByRole('searchbox', { name: 'Search logs' }).fill('zzz-nothing-matches');
    await lines.getByText('No line matches the search.').waitFor();
    await page.getByRole('searchbox', { name: 'Search logs' }).fill('');
    await page.getByRole('button', { name: 'Pause' }).click();
    await page.getByText(/Paused \(\d+ waiting\)/).waitFor();
    await page.getByRole('combobox', { name: 'Minimum level' }).selectOption('WARNING');
    await page.getByRole('button', { name: 'Resume' }).click();
    await screenshot(page, 'dark-21-admin-logs');
  });

  it('looks right in the light theme too', async () => {
    await page.getByRole('button', { name: 'Switch to light theme' }).click();
    expect(await page.locator('html').getAttribute('data-theme')).toBe('light');
    const tour: [string, string, string][] = [
      ['/sessions', 'Release planning', 'light-01-sessions'],
      ['/workflows', 'Routing test', 'light-03-workflows'],
      ['/workflows/billing', 'Workflow', 'light-04-workflow-editor'],
      ['/knowledge', 'runbooks', 'light-05-knowledge'],
      ['/api-keys', 'deploy bot', 'light-06-api-keys'],
      ['/admin/users', 'ada', 'light-07-admin-users'],
      ['/admin/logs', 'Live logs', 'light-08-admin-logs'],
    ];
    for (const [address, text, name] of tour) {
      await page.goto(`${base}${address}`);
      await page.getByText(text).first().waitFor();
      await screenshot(page, name);
    }
    await page.goto(`${base}/sessions`);
    await page.getByRole('link', { name: 'Release planning' }).click();
    await conversation().getByText('Saved notes.txt.').waitFor();
    await screenshot(page, 'light-02-chat');
    model.enqueue(toolCall('call_3', 'write_file', { path: 'light.txt', content: 'a' }), slowText(['ok'], 10));
    await send('one more file');
    await page.getByRole('dialog').waitFor();
    await screenshot(page, 'light-09-tool-confirmation');
    await page.keyboard.press('c');
    await page.getByRole('dialog').waitFor({ state: 'detached' });
    await page.getByRole('status', { name: 'Agent: Ready' }).waitFor();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(/\/sign-in$/);
    await screenshot(page, 'light-10-sign-in');
  });
});
