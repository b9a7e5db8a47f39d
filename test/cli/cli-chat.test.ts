import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { closedPort, runCli, startHubProcess, type HubProcess } from '../helpers/cli';
import { request } from '../helpers/http';
import { PtySession } from '../helpers/pty';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir';
import { registerUser, type TestUser } from '../helpers/users';
import { FakeOpenAiServer } from '../fakes/openai-server';
import { answer, answerInPieces, modelEnv, toolCalls, writeFile } from './model-replies';

/**
 * `switchboard chat` as a person uses it: the built binary on a pseudo-terminal, its output rendered
 * by a headless xterm, against a real hub (on a fixed port, so it can be restarted under the client)
 * whose model is a fake OpenAI-compatible server scripting answers and tool calls.
 */
let model: FakeOpenAiServer;
let hub: HubProcess;
let admin: TestUser;
let env: Record<string, string>;
const sessions: PtySession[] = [];

const ENTER = '\r';
const CTRL_C = '\u0003';
const CTRL_D = '\u0004';
const CTRL_U = '\u0015';
const UP = '\u001b[A';

beforeAll(async () => {
  model = new FakeOpenAiServer();
  hub = await startHubProcess({ port: await closedPort(), env: modelEnv(await model.start()) });
  admin = await registerUser(hub.api, 'chat_admin');
  env = { SWITCHBOARD_CONFIG_DIR: makeTempDir('switchboard-cli-config-'), SWITCHBOARD_URL: hub.url };
  const login = await runCli(['login', '--username', 'chat_admin', '--password', 'pw-chat_admin-long-enough'], env);
  if (login.code !== 0) throw new Error(login.stderr);
}, 60_000);

afterEach(async () => {
  for (const session of sessions.splice(0)) {
    session.dispose();
    // A turn a failed test left waiting (for a confirmation, say) must not hold the worker.
    const id = /session ([0-9a-f-]{36})/.exec(session.text())?.[1];
    if (id) await request(`${hub.api}/sessions/${id}/cancel`, { method: 'POST', headers: { authorization: `Bearer ${admin.token}` } });
  }
  // Every test uses up what it scripted; leftovers of a failed one must not answer the next.
  model.clearReplies();
});

afterAll(async () => {
  await hub.stop();
  await model.stop();
  removeTempDirs();
});

/** `switchboard chat …` on a terminal of the given size, once its prompt is up. */
async function chat(args: string[] = ['--new'], size = { columns: 100, rows: 30 }): Promise<PtySession> {
  const session = new PtySession(['chat', ...args], { env, ...size });
  sessions.push(session);
  await session.waitFor('Ctrl-D or /quit leaves.');
  await session.waitFor((s) => s.screen().some((row) => row.startsWith('›')));
  return session;
}

function count(text: string, needle: string): number {
  return text.split(needle).length - 1;
}

/** Waits for the `n`th confirmation to be asked: its question written, the status line waiting. */
function asked(session: PtySession, n: number): Promise<void> {
  return session.waitFor((s) => count(s.text(), 'needs your confirmation') >= n && s.bottomRow().startsWith('? waiting for your answer'));
}

/** Waits for the `n`th occurrence of `needle` in the transcript. */
function nth(session: PtySession, needle: string, n: number): Promise<void> {
  return session.waitFor((s) => count(s.text(), needle) >= n);
}

function sessionIdOf(session: PtySession): string {
  return /session ([0-9a-f-]{36})/.exec(session.text())![1]!;
}

const workspace = (name: string) => path.join(hub.dataDir, 'workspace', name);

it('streams the answer above a status line that never mixes into it, then prints the summary', async () => {
  // 30 + 30 characters fill a 60-column row exactly (the pending-wrap trap), then a pause, then more.
  const pieces = ['A'.repeat(29) + ' ', 'B'.repeat(30), 'C'.repeat(10), ' and then the rest.'];
  model.enqueue(answerInPieces(pieces, 250));
  const session = await chat(['--new'], { columns: 60, rows: 12 });
  session.type(`tell me something${ENTER}`);
  // Mid-stream: the status line is the last row, and only there.
  await session.waitFor((s) => /^⠋|^⠙|^⠹|^⠸|^⠼|^⠴|^⠦|^⠧|^⠇|^⠏/.test(s.bottomRow()) && s.bottomRow().includes('writing'));
  expect(session.bottomRow()).toMatch(/ writing · \d+(\.\d)? (ms|s) · Ctrl-C cancels$/);
  expect(session.screen().slice(0, -1).join('\n')).not.toMatch(/· Ctrl-C cancels$/m);
  await session.waitFor((s) => s.text().includes('✓ done in') && s.transcript().at(-1) === '›');
  const lines = session.transcript();
  const asked = lines.indexOf('› tell me something');
  expect(lines[asked + 1]).toBe(pieces.join(''));
  expect(lines[asked + 2]).toMatch(/^✓ done in \d+(\.\d)? (ms|s) · \d+ tokens \(\d+ in, \d+ out\)$/);
  // The rows as drawn: the first one filled to the last column, the next one going on from there.
  const rows = session.screen();
  const first = rows.findIndex((row) => row.startsWith('AAAA'));
  expect(rows[first]).toBe(`${'A'.repeat(29)} ${'B'.repeat(30)}`);
  expect(rows[first + 1]).toBe(`${'C'.repeat(10)} and then the rest.`);
  // The status line is gone once the turn ended; the prompt is back.
  expect(session.text()).not.toMatch(/· Ctrl-C cancels$/m);
  // Up arrow recalls the last message (line editing and history).
  session.type(UP);
  await session.waitFor((s) => s.transcript().at(-1) === '› tell me something');
  // Ctrl-D on an empty line leaves.
  session.type(CTRL_U);
  await session.waitFor((s) => s.transcript().at(-1) === '›');
  session.type(CTRL_D);
  expect(await session.exited).toBe(0);
});

it('asks each confirmation at once with one key: y (and Enter, after an invalid key), n, f, c', async () => {
  const session = await chat();
  // Enter after an invalid key: the question comes again, Enter allows (y).
  model.enqueue(toolCalls(writeFile('key-y.txt', 'yes')), answer('Wrote key-y.txt.'));
  session.type(`write key-y${ENTER}`);
  await asked(session, 1);
  expect(session.text()).toContain('? write_file needs your confirmation\n  Allow "write_file" to run with');
  expect(session.text()).toMatch(/\n {4}path {5}"key-y.txt"\n/);
  await session.waitFor((s) => s.bottomRow() === '? waiting for your answer about write_file · y n a d f c');
  session.type('x');
  await session.waitFor('Press y, n, a, d, f or c (Enter = y).');
  session.type(ENTER);
  await nth(session, '✓ done in', 1);
  expect(session.text()).toContain('[c]ancel › y → allowed once\nWrote key-y.txt.\n✓ done in');
  expect(session.text()).toMatch(/· 1 tool call: write_file \d+(\.\d)? (ms|s)/);
  expect(readFileSync(workspace('key-y.txt'), 'utf8')).toBe('yes');

  model.enqueue(toolCalls(writeFile('key-n.txt')), answer('Fine, no file.'));
  session.type(`write key-n${ENTER}`);
  await asked(session, 2);
  session.type('n');
  await nth(session, '✓ done in', 2);
  expect(session.text()).toContain('› n → denied\nFine, no file.\n');
  expect(session.text()).toMatch(/1 tool call: write_file ✗ The user denied this call/);
  expect(existsSync(workspace('key-n.txt'))).toBe(false);

  // forbid_all: the other call of the round is refused without a question, and nothing runs.
  model.enqueue(toolCalls(writeFile('key-f1.txt'), writeFile('key-f2.txt')), answer('Blocked, as you said.'));
  session.type(`write two${ENTER}`);
  await asked(session, 3);
  session.type('f');
  await nth(session, '✓ done in', 3);
  expect(count(session.text(), 'needs your confirmation')).toBe(3);
  expect(session.text()).toContain('› f → every further tool refused this turn\nBlocked, as you said.\n');
  expect(existsSync(workspace('key-f1.txt')) || existsSync(workspace('key-f2.txt'))).toBe(false);

  // cancel: the turn ends with CANCELLED and the prompt is back.
  model.enqueue(toolCalls(writeFile('key-c.txt')));
  session.type(`write key-c${ENTER}`);
  await asked(session, 4);
  session.type('c');
  await session.waitFor('✗ CANCELLED: The turn was cancelled.');
  await session.waitFor((s) => s.transcript().at(-1) === '›');
  expect(existsSync(workspace('key-c.txt'))).toBe(false);
  session.type(`/quit${ENTER}`);
  expect(await session.exited).toBe(0);
});

it('a (allow all) approves the tool for the session; d (disable) turns it off for the session', async () => {
  const allowing = await chat();
  model.enqueue(toolCalls(writeFile('key-a1.txt'), writeFile('key-a2.txt')), answer('Both written.'));
  allowing.type(`write both${ENTER}`);
  await asked(allowing, 1);
  allowing.type('a');
  await nth(allowing, '✓ done in', 1);
  expect(allowing.text()).toContain('› a → allowed for the rest of this session\n');
  // The second call of the round and a later turn's call run without a question.
  model.enqueue(toolCalls(writeFile('key-a3.txt')), answer('Third one too.'));
  allowing.type(`and a third${ENTER}`);
  await nth(allowing, '✓ done in', 2);
  expect(count(allowing.text(), 'needs your confirmation')).toBe(1);
  for (const name of ['key-a1.txt', 'key-a2.txt', 'key-a3.txt']) expect(existsSync(workspace(name))).toBe(true);

  const disabling = await chat();
  model.enqueue(toolCalls(writeFile('key-d1.txt')), answer('Disabled then.'));
  disabling.type(`write key-d${ENTER}`);
  await asked(disabling, 1);
  disabling.type('d');
  await nth(disabling, '✓ done in', 1);
  expect(disabling.text()).toContain('› d → tool disabled for this session\n');
  model.enqueue(toolCalls(writeFile('key-d2.txt')), answer('Still disabled.'));
  disabling.type(`try again${ENTER}`);
  await nth(disabling, '✓ done in', 2);
  expect(count(disabling.text(), 'needs your confirmation')).toBe(1);
  expect(disabling.text()).toMatch(/write_file ✗ The user disabled "write_file" for this session\./);
  expect(existsSync(workspace('key-d1.txt')) || existsSync(workspace('key-d2.txt'))).toBe(false);
  const tools = await request(`${hub.api}/sessions/${sessionIdOf(disabling)}/tools`, { headers: { authorization: `Bearer ${admin.token}` } });
  expect(tools.body.data.find((tool: { name: string }) => tool.name === 'write_file').status).toBe('disabled');
});

it('Ctrl-C during a turn cancels it (the model request is dropped) and the prompt returns; Ctrl-C at the prompt quits', async () => {
  const session = await chat();
  const index = model.requests.length;
  model.enqueue(answer('one two three four five six seven eight nine ten eleven twelve thirteen fourteen', 200));
  session.type(`count slowly${ENTER}`);
  await session.waitFor('one two');
  session.type(CTRL_C);
  await session.waitFor('✗ CANCELLED: The turn was cancelled.');
  expect(await model.hungUp(index)).toBe(true);
  expect(session.text()).not.toContain('fourteen');
  await session.waitFor((s) => s.transcript().at(-1) === '›');
  // Ctrl-C with text typed clears the line; on an empty line it quits.
  session.type('half a thought');
  await session.waitFor('› half a thought');
  session.type(CTRL_C);
  await session.waitFor((s) => s.transcript().at(-1) === '›');
  session.type(CTRL_C);
  expect(await session.exited).toBe(0);
});

it('joins a turn already running in the session (started elsewhere) and shows its answer when it ends', async () => {
  const auth = { authorization: `Bearer ${admin.token}`, 'content-type': 'application/json' };
  const { id } = (await request(`${hub.api}/sessions`, { method: 'POST', headers: auth, body: '{}' })).body.data;
  const text = 'An answer that was already on its way when the terminal joined.';
  model.enqueue(answer(text, 150));
  await request(`${hub.api}/sessions/${id}/messages`, { method: 'POST', headers: auth, body: JSON.stringify({ text: 'from another client' }) });
  await model.streaming();
  const session = new PtySession(['chat', '--session', id.slice(0, 8)], { env, columns: 100, rows: 30 });
  sessions.push(session);
  await session.waitFor('A turn is running in this session: following it');
  await session.waitFor('✓ done in');
  const lines = session.transcript();
  expect(lines[lines.findIndex((line) => line.startsWith('✓ done in')) - 1]).toBe(text);
  await session.waitFor((s) => s.transcript().at(-1) === '›');
});

it('survives a hub restart mid-turn: reconnects, and the answer is complete and shown once', async () => {
  const text = 'The restarted hub runs the turn again from the start, and the client shows each word of it exactly once.';
  // The first run is cut by the restart; the hub runs the turn again after it starts (same answer).
  model.enqueue(answer(text, 150), answer(text, 150));
  const session = await chat();
  session.type(`survive a restart${ENTER}`);
  await session.waitFor('The restarted hub runs');
  await hub.restart();
  await session.waitFor('✓ done in', 30_000);
  const lines = session.transcript();
  expect(lines[lines.indexOf('› survive a restart') + 1]).toBe(text);
  expect(count(session.text(), 'The restarted hub')).toBe(1);
  expect(session.raw).toContain('connection lost');
  // The session goes on after the restart.
  model.enqueue(answer('Still here.'));
  session.type(`still there?${ENTER}`);
  await nth(session, '✓ done in', 2);
  expect(session.text()).toContain('› still there?\nStill here.\n');
}, 60_000);

it('a turn the hub ran again at once while the client was away: the answer is complete and shown once', async () => {
  const words = Array.from({ length: 30 }, (_, index) => `w${index + 1}`);
  const text = `${words.join(' ')}.`;
  // Cut by the restart after many frames; the restarted hub runs it again at once, in one piece.
  // Usually it is over before the client is back (its new event log is shorter than what the client
  // saw: nothing to replay, the reply comes from the history); under load the client may be back
  // in time to see it end. The screen must be the same either way.
  model.enqueue(answer(text, 100), answerInPieces([text]));
  const session = await chat();
  session.type(`finish without me${ENTER}`);
  await session.waitFor('w20 ');
  await hub.restart();
  await session.waitFor((s) => s.text().includes('✓ done') && s.transcript().at(-1) === '›', 30_000);
  const lines = session.transcript();
  expect(lines[lines.indexOf('› finish without me') + 1]).toBe(text);
  expect(lines[lines.indexOf('› finish without me') + 2]).toMatch(
    /^✓ done (in |\(the hub finished the turn while the connection was down; the answer above is the stored one\))/,
  );
}, 60_000);

it('an approval is asked once: the requester’s own y is refused, approvers’ clicks show as progress lines, never as the question again (issue 30)', async () => {
  const bob = await registerUser(hub.api, 'chat_bob');
  const carol = await registerUser(hub.api, 'chat_carol');
  const workflow = {
    name: 'guarded-chat',
    tool_list: 'write_file',
    approvals: [{ tools: ['write_file'], approvers: { users: ['chat_bob', 'chat_carol'] }, quorum: 2 }],
  };
  const created = await request(`${hub.api}/assistant/workflows`, {
    method: 'POST',
    headers: { authorization: `Bearer ${admin.token}`, 'content-type': 'application/json' },
    body: JSON.stringify(workflow),
  });
  expect(created.status).toBe(201);
  const session = await chat(['--new', '--workflow', 'guarded-chat']);
  model.enqueue(toolCalls(writeFile('approved-by-two.txt', 'two')), answer('Wrote it after two approvals.'));
  session.type(`write it${ENTER}`);
  await asked(session, 1);
  expect(session.text()).toContain('Waiting for approval by @chat_bob, @chat_carol (0 of 2)');
  session.type('y');
  await session.waitFor('! FORBIDDEN: Your own request needs approval by someone else.');
  const pending = (await request(`${hub.api}/sessions/${sessionIdOf(session)}`, { headers: { authorization: `Bearer ${admin.token}` } })).body.data
    .pending_confirmation;
  const approve = (user: TestUser) =>
    request(`${hub.api}/approvals/${pending.confirmation_id}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${user.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ action: 'allow' }),
    });
  expect((await approve(bob)).status).toBe(200);
  await session.waitFor('… Waiting for approval by @chat_bob, @chat_carol (1 of 2) (approved by chat_bob)');
  expect((await approve(carol)).status).toBe(200);
  await nth(session, 'Wrote it after two approvals.', 1);
  await nth(session, '✓ done in', 1);
  // Asked once, however often the progress came.
  expect(count(session.text(), 'needs your confirmation')).toBe(1);
  expect(readFileSync(workspace('approved-by-two.txt'), 'utf8')).toBe('two');
}, 60_000);
