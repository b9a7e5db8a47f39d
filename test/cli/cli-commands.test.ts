import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { signTestJwt } from '../helpers/auth-service';
import { runCli, spawnCli, startHubProcess, type CliRun, type HubProcess } from '../helpers/cli';
import { jsonBody, request } from '../helpers/http';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir';
import { registerUser, type TestUser } from '../helpers/users';
import { FakeOpenAiServer } from '../fakes/openai-server';
import { answer, modelEnv, toolCalls, writeFile } from './model-replies';

/**
 * The CLI's scripting side and its read commands, as processes with pipes (no terminal) against a
 * real hub whose model is a fake OpenAI-compatible server.
 */
let model: FakeOpenAiServer;
let hub: HubProcess;
let admin: TestUser;
let user: TestUser;
/** A config dir with the admin's stored login. */
let adminEnv: Record<string, string>;
let userEnv: Record<string, string>;

beforeAll(async () => {
  model = new FakeOpenAiServer();
  hub = await startHubProcess({ env: modelEnv(await model.start()) });
  admin = await registerUser(hub.api, 'cli_admin');
  user = await registerUser(hub.api, 'cli_user');
  adminEnv = await loggedIn('cli_admin');
  userEnv = await loggedIn('cli_user');
});

afterAll(async () => {
  await hub.stop();
  await model.stop();
  removeTempDirs();
});

async function loggedIn(username: string): Promise<Record<string, string>> {
  const env = { SWITCHBOARD_CONFIG_DIR: makeTempDir('switchboard-cli-config-'), SWITCHBOARD_URL: hub.url };
  const login = await runCli(['login', '--username', username, '--password', `pw-${username}-long-enough`], env);
  if (login.code !== 0) throw new Error(`login failed: ${login.stderr}`);
  return env;
}

function credentials(env: Record<string, string>): { access_token: string; refresh_token: string } {
  return JSON.parse(readFileSync(path.join(env.SWITCHBOARD_CONFIG_DIR!, 'credentials.json'), 'utf8')).hubs[hub.url];
}

function workspaceFile(name: string): string {
  return path.join(hub.dataDir, 'workspace', name);
}

/** Nothing secret and no terminal control sequence in what a script gets. */
function expectPlain(run: CliRun, env: Record<string, string>): void {
  const { access_token: access, refresh_token: refresh } = credentials(env);
  for (const stream of [run.stdout, run.stderr]) {
    expect(stream).not.toContain(access);
    expect(stream).not.toContain(refresh);
    expect(stream).not.toContain('\u001b');
  }
}

describe('chat --message and piped stdin (scripting)', () => {
  it('--message prints the answer as plain text on stdout and exits 0', async () => {
    model.enqueue(answer('The hub is up and answering.'));
    const run = await runCli(['chat', '--new', '--message', 'are you there?'], adminEnv);
    expect(run).toMatchObject({ code: 0, stdout: 'The hub is up and answering.\n', stderr: '' });
    expectPlain(run, adminEnv);
    expect(JSON.stringify(model.requests.at(-1)!.body.messages)).toContain('are you there?');
  });

  it('a piped stdin is the message (all of it), and without --new the latest session continues', async () => {
    model.enqueue(answer('Two lines received.'));
    const run = await runCli(['chat'], adminEnv, 'first line\nsecond line\n');
    expect(run).toMatchObject({ code: 0, stdout: 'Two lines received.\n', stderr: '' });
    const sent = model.requests.at(-1)!.body.messages as { role: string; content: string }[];
    expect(sent.at(-1)).toMatchObject({ role: 'user', content: 'first line\nsecond line' });
    // The previous test's session was continued: its exchange is in the context.
    expect(sent.map((message) => message.content)).toContain('are you there?');
  });

  it('--yes allows a confirmation, --deny refuses it, neither cancels the turn and exits 1', async () => {
    model.enqueue(toolCalls(writeFile('scripted-yes.txt', 'yes')), answer('Written.'));
    const allowed = await runCli(['chat', '--new', '-m', 'write it', '--yes'], adminEnv);
    expect(allowed).toMatchObject({ code: 0, stdout: 'Written.\n' });
    expect(allowed.stderr).toMatch(/^switchboard: allowed write_file \(--yes\): Allow "write_file" to run with .*path: "scripted-yes.txt"/);
    expect(readFileSync(workspaceFile('scripted-yes.txt'), 'utf8')).toBe('yes');

    model.enqueue(toolCalls(writeFile('scripted-deny.txt')), answer('Not written, as you wish.'));
    const denied = await runCli(['chat', '--new', '-m', 'write it', '--deny'], adminEnv);
    expect(denied).toMatchObject({ code: 0, stdout: 'Not written, as you wish.\n' });
    expect(denied.stderr).toContain('denied write_file (--deny)');
    expect(existsSync(workspaceFile('scripted-deny.txt'))).toBe(false);

    model.enqueue(toolCalls(writeFile('scripted-ask.txt')));
    const asked = await runCli(['chat', '--new', '-m', 'write it'], adminEnv);
    expect(asked.code).toBe(1);
    expect(asked.stdout).toBe('');
    expect(asked.stderr).toBe(
      'switchboard: the turn wanted to run write_file, which needs a confirmation: run again with --yes to allow it or --deny to refuse it. The turn was cancelled.\n',
    );
    expect(existsSync(workspaceFile('scripted-ask.txt'))).toBe(false);

    const both = await runCli(['chat', '-m', 'x', '--yes', '--deny'], adminEnv);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain("option '--yes' cannot be used with option '--deny'");
  });

  it('an error frame exits 1 and names the code on stderr; --json prints the done payload', async () => {
    // The SDK retries a 500 once (llm.max_retries): two failures make the turn fail.
    const failure = { kind: 'error' as const, status: 500, body: { error: { message: 'model crashed' } } };
    model.enqueue(failure, failure);
    const failed = await runCli(['chat', '--new', '-m', 'fail please'], adminEnv);
    expect(failed.code).toBe(1);
    expect(failed.stdout).toBe('');
    expect(failed.stderr).toMatch(/^switchboard: PROVIDER_ERROR: /);

    model.enqueue(answer('As JSON.'));
    const json = await runCli(['chat', '--new', '-m', 'json please', '--json'], adminEnv);
    expect(json.code).toBe(0);
    const done = JSON.parse(json.stdout);
    expect(done).toMatchObject({ text: 'As JSON.', tool_calls: 0, message_id: expect.any(String), session_id: expect.any(String) });
  });

  it('Ctrl-C (SIGINT) cancels the turn on the hub and exits 130', async () => {
    const index = model.requests.length;
    model.enqueue(answer('a slow answer that will not be finished because the script is interrupted', 200));
    const chat = spawnCli(['chat', '--new', '-m', 'take your time'], adminEnv);
    await model.streaming();
    chat.child.kill('SIGINT');
    expect(await chat.exited).toBe(130);
    expect(chat.stdout()).toBe('');
    expect(chat.stderr()).toBe('Interrupted: the turn was cancelled.\n');
    expect(await model.hungUp(index)).toBe(true);
  });

  it('refuses what cannot work, with one line and exit 1 or 2', async () => {
    const name = await runCli(['chat', '--name', 'x', '-m', 'hi'], adminEnv);
    expect(name).toMatchObject({ code: 2, stderr: '--name names a new session: use it with --new.\n' });
    const workflow = await runCli(['chat', '--workflow', 'no-such-flow', '-m', 'hi'], adminEnv);
    expect(workflow.code).toBe(1);
    expect(workflow.stderr).toMatch(/^The hub refused the request \(404 WORKFLOW_NOT_FOUND\)/);
    const empty = await runCli(['chat', '--new'], adminEnv, '\n');
    expect(empty).toMatchObject({ code: 2, stderr: 'Nothing to send: the message is empty (give --message "…" or pipe the text on stdin).\n' });
    const unknown = await runCli(['chat', '--session', 'ffffffff', '-m', 'hi'], adminEnv);
    expect(unknown).toMatchObject({ code: 1, stderr: 'No session of yours starts with "ffffffff".\n' });
  });
});

describe('sessions and history', () => {
  it('lists, shows, archives and restores sessions; a session is named by a prefix of its id', async () => {
    model.enqueue(toolCalls(writeFile('history.txt', 'kept')), answer('Saved history.txt.'));
    const chat = await runCli(['chat', '--new', '--name', 'history demo', '-m', 'save a note', '--yes', '--json'], userEnv);
    expect(chat.code).toBe(0);
    const sessionId: string = JSON.parse(chat.stdout).session_id;
    const prefix = sessionId.slice(0, 8);

    const list = await runCli(['sessions'], userEnv);
    expect(list.code).toBe(0);
    const [header, ...rows] = list.stdout.trim().split('\n');
    expect(header).toMatch(/^ID\s+STATE\s+CHANNEL\s+WORKFLOW\s+UPDATED\s+NAME$/);
    expect(rows.find((row) => row.startsWith(`${prefix} `))).toMatch(/idle\s+web\s+—\s+\d{4}-\d\d-\d\d \d\d:\d\d\s+history demo$/);
    // The user sees only their own sessions; the admin sees everyone's unless --mine.
    const listed = JSON.parse((await runCli(['sessions', 'list', '--json'], userEnv)).stdout) as { id: string; owner_id: string }[];
    expect(new Set(listed.map((session) => session.owner_id))).toEqual(new Set([user.id]));
    const adminMine = JSON.parse((await runCli(['sessions', '--mine', '--json'], adminEnv)).stdout) as { owner_id: string }[];
    expect(adminMine.every((session) => session.owner_id === admin.id)).toBe(true);

    const show = await runCli(['sessions', 'show', prefix], userEnv);
    expect(show.code).toBe(0);
    expect(show.stdout).toContain(`Session   ${sessionId}`);
    expect(show.stdout).toMatch(/Name\s+history demo/);
    expect(show.stdout).toMatch(/Messages\s+4/); // user, tool round, tool result, reply

    const history = await runCli(['history', prefix], userEnv);
    expect(history.code).toBe(0);
    expect(history.stdout).toMatch(/── you · .*\nsave a note\n/);
    // Newer hubs store each call's duration and error too (decisions.md §3); shown when present.
    expect(history.stdout).toMatch(/\n {2}▶ write_file \{"path":"history.txt","content":"kept"\}( ✓ \d+ ms)?\n/);
    expect(history.stdout).toMatch(/── assistant · .*\nSaved history.txt.\n/);
    const historyJson = JSON.parse((await runCli(['history', sessionId, '--json', '--last', '1'], userEnv)).stdout);
    expect(historyJson).toEqual([expect.objectContaining({ role: 'assistant', content: 'Saved history.txt.' })]);

    const archive = await runCli(['sessions', 'archive', prefix], userEnv);
    expect(archive).toMatchObject({
      code: 0,
      stdout: `Archived session ${sessionId} ("history demo"). \`switchboard sessions restore ${sessionId}\` brings it back.\n`,
    });
    expect((await runCli(['sessions', '--json'], userEnv)).stdout).not.toContain(sessionId);
    expect((await runCli(['sessions', '--archived', '--json'], userEnv)).stdout).toContain(sessionId);
    const archivedChat = await runCli(['chat', '--session', prefix, '-m', 'hello?'], userEnv);
    expect(archivedChat).toMatchObject({
      code: 1,
      stderr: `Session ${sessionId} is archived: \`switchboard sessions restore ${sessionId}\` brings it back.\n`,
    });
    expect((await runCli(['sessions', 'restore', prefix], userEnv)).code).toBe(0);
    expect((await runCli(['sessions', 'show', sessionId, '--json'], userEnv)).stdout).toContain('"archived_at": null');

    // Another user's session does not exist for this one.
    await registerUser(hub.api, 'cli_other');
    const foreign = await runCli(['history', sessionId], await loggedIn('cli_other'));
    expect(foreign.code).toBe(1);
    expect(foreign.stderr).toContain('SESSION_NOT_FOUND');
  });
});

describe('keys and whoami', () => {
  it('creates a key (printed once, alone on stdout), lists it by prefix only, revokes it', async () => {
    const created = await runCli(['keys', 'create', '--label', 'ci runner'], userEnv);
    expect(created.code).toBe(0);
    const key = created.stdout.trim();
    expect(key).toMatch(/^svc_live_[A-Za-z0-9_-]{43}$/);
    expect(created.stderr).toContain('Created API key "ci runner"');
    expect(created.stderr).toContain('shown only this once');

    const keyEnv = { SWITCHBOARD_CONFIG_DIR: makeTempDir(), SWITCHBOARD_URL: hub.url, SWITCHBOARD_API_KEY: key };
    const whoami = await runCli(['whoami'], keyEnv);
    expect(whoami.code).toBe(0);
    expect(whoami.stdout.split('\n')[0]).toBe('cli_user (user) · cli_user@example.com');
    expect(whoami.stdout).toContain(`via   API key ${key.slice(0, 12)}…`);
    expect(whoami.stdout).not.toContain(key);

    const list = await runCli(['keys', 'list'], userEnv);
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(new RegExp(`${key.slice(0, 12)}…\\s+active\\s+.*ci runner`));
    expect(list.stdout).not.toContain(key);

    // By the prefix `keys list` shows; the error echoes only the public prefix of a whole key.
    const revoke = await runCli(['keys', 'revoke', `${key.slice(0, 12)}…`], userEnv);
    expect(revoke.code).toBe(0);
    expect(revoke.stdout).toMatch(/^Revoked API key "ci runner" \(svc_live_[\w-]{3}…, id [0-9a-f-]{36}\)\.\n$/);
    const refused = await runCli(['whoami'], keyEnv);
    expect(refused).toMatchObject({ code: 2, stderr: `The hub at ${hub.url} did not accept SWITCHBOARD_API_KEY: UNAUTHORIZED.\n` });
    const wrong = await runCli(['keys', 'revoke', `svc_live_${'z'.repeat(43)}`], userEnv);
    expect(wrong).toMatchObject({ code: 1, stderr: 'No API key matches "svc_live_zzz…" (see `switchboard keys list`).\n' });
  });

  it('whoami names the account, the hub and the stored login; --json for scripts', async () => {
    const run = await runCli(['whoami'], adminEnv);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('cli_admin (admin) · cli_admin@example.com');
    expect(run.stdout).toContain(`hub   ${hub.url} (Switchboard `);
    expect(run.stdout).toContain(`via   the stored login in ${path.join(adminEnv.SWITCHBOARD_CONFIG_DIR!, 'credentials.json')}`);
    expectPlain(run, adminEnv);
    const json = JSON.parse((await runCli(['whoami', '--json'], adminEnv)).stdout);
    expect(json).toMatchObject({ hub: hub.url, via: 'login', user: { username: 'cli_admin', role: 'admin' } });
  });
});

describe('logs', () => {
  it('streams log lines to an admin until Ctrl-C (SIGINT), exit 0', async () => {
    const logs = spawnCli(['logs', '--level', 'info'], adminEnv);
    await logs.waitFor('logs at INFO and above; Ctrl-C stops.');
    await request(`${hub.api}/openapi.json`);
    await logs.waitFor('GET /api/v1/openapi.json 200');
    expect(logs.stdout()).toMatch(/^\d\d:\d\d:\d\d\.\d{3} INFO {4}api:\d+ {2}GET \/api\/v1\/openapi\.json 200 \d+ ms$/m);
    logs.child.kill('SIGINT');
    expect(await logs.exited).toBe(0);
  });

  it("--json prints the hub's log_line objects; an expired access token is refreshed once at connect", async () => {
    const env = await loggedIn('cli_admin');
    const file = path.join(env.SWITCHBOARD_CONFIG_DIR!, 'credentials.json');
    const contents = JSON.parse(readFileSync(file, 'utf8'));
    const now = Math.floor(Date.now() / 1000);
    const expired = signTestJwt({ sub: admin.id, role: 'admin', typ: 'access', iss: 'switchboard', aud: 'switchboard-api', iat: now - 1200, exp: now - 600 });
    contents.hubs[hub.url].access_token = expired;
    writeFileSync(file, JSON.stringify(contents), { mode: 0o600 });

    const logs = spawnCli(['logs', '--json'], env);
    await logs.waitFor('Ctrl-C stops.');
    await request(`${hub.api}/openapi.json`);
    await logs.waitFor('GET /api/v1/openapi.json 200');
    const line = JSON.parse(
      logs
        .stdout()
        .split('\n')
        .find((text) => text.includes('GET /api/v1/openapi.json'))!,
    );
    expect(line).toMatchObject({ type: 'log_line', level: 'INFO', message: expect.stringMatching(/^GET \/api\/v1\/openapi\.json 200/) });
    logs.child.kill('SIGINT');
    expect(await logs.exited).toBe(0);
    expect(credentials(env).access_token).not.toBe(expired);
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it('is refused to a user who is not an admin: exit 2, one line', async () => {
    const run = await runCli(['logs'], userEnv);
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(`Connection to ${hub.url} ended: the log stream is for admins, and this account is not one.\n`);
  });
});

describe('the hub in between', () => {
  it('a message the hub refuses (a turn already running) is one line, exit 1', async () => {
    const { id } = (await request(`${hub.api}/sessions`, jsonBody({}, { authorization: `Bearer ${admin.token}` }))).body.data;
    model.enqueue({ ...answer('slow answer that keeps the turn running for a while', 200) });
    const busy = await request(`${hub.api}/sessions/${id}/messages`, jsonBody({ text: 'first' }, { authorization: `Bearer ${admin.token}` }));
    expect(busy.status).toBe(202);
    const run = await runCli(['chat', '--session', id, '-m', 'second'], adminEnv);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^The hub refused the request \(409 TURN_IN_PROGRESS\)/);
  });
});
