import { readFileSync, statSync, writeFileSync, existsSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { bearer, signTestJwt } from '../helpers/auth-service';
import { closedPort, runCli, startHubProcess, type CliRun, type HubProcess } from '../helpers/cli';
import { jsonBody, request } from '../helpers/http';
import { REPO_ROOT } from '../helpers/process';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir';
import { registerUser, type TestUser } from '../helpers/users';

const EXAMPLES = path.join(REPO_ROOT, 'workflows');
const PASSWORD = 'pw-cli_auth_admin-long-enough';

let hub: HubProcess;
let hubUrl: string;
let admin: TestUser;

beforeAll(async () => {
  hub = await startHubProcess();
  hubUrl = hub.url;
  admin = await registerUser(hub.api, 'cli_auth_admin');
});

afterAll(async () => {
  await hub.stop();
  removeTempDirs();
});

/** A fresh, empty CLI configuration directory for one test. */
function freshEnv(extra: Record<string, string> = {}): Record<string, string> {
  return { SWITCHBOARD_CONFIG_DIR: makeTempDir('switchboard-cli-config-'), SWITCHBOARD_URL: hubUrl, ...extra };
}

function storedLogin(env: Record<string, string>): { username: string; access_token: string; refresh_token: string } {
  const file = JSON.parse(readFileSync(path.join(env.SWITCHBOARD_CONFIG_DIR!, 'credentials.json'), 'utf8'));
  return file.hubs[hubUrl];
}

/** Nothing secret in what the CLI printed. */
function expectNoSecrets(run: CliRun, secrets: string[]): void {
  for (const secret of secrets) {
    expect(run.stdout).not.toContain(secret);
    expect(run.stderr).not.toContain(secret);
  }
}

describe('switchboard login', () => {
  it('stores the token pair keyed by hub URL in a 0600 file, printing no secret', async () => {
    const env = freshEnv();
    const run = await runCli(['login', '--username', 'cli_auth_admin', '--password', PASSWORD], env);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(run.stdout).toContain(`Logged in to ${hubUrl} as cli_auth_admin (admin).`);
    const file = path.join(env.SWITCHBOARD_CONFIG_DIR!, 'credentials.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const stored = storedLogin(env);
    expect(stored.username).toBe('cli_auth_admin');
    // The stored pair works against the hub.
    expect((await request(`${hub.api}/auth/me`, bearer(stored.access_token))).status).toBe(200);
    expectNoSecrets(run, [PASSWORD, stored.access_token, stored.refresh_token]);
  });

  it('reads the password from stdin when it is piped, and accepts the /api/v1 URL form', async () => {
    const env = freshEnv();
    const run = await runCli(['login', '--username', 'cli_auth_admin', '--url', `${hubUrl}/api/v1/`], env, `${PASSWORD}\n`);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    // Stored under the normalised URL, so the other commands (default SWITCHBOARD_URL form) find it.
    expect(storedLogin(env).username).toBe('cli_auth_admin');
    expect((await runCli(['workflows', 'diff', EXAMPLES], env)).code).toBe(0);
  });

  it('bad credentials: exit 2, one line, nothing stored', async () => {
    const env = freshEnv();
    const run = await runCli(['login', '--username', 'cli_auth_admin', '--password', 'wrong-password-here'], env);
    expect(run.code).toBe(2);
    expect(run.stderr.trim().split('\n')).toEqual([`Login to ${hubUrl} refused: wrong username or password, or the account is disabled.`]);
    expect(existsSync(path.join(env.SWITCHBOARD_CONFIG_DIR!, 'credentials.json'))).toBe(false);
    expectNoSecrets(run, ['wrong-password-here']);
  });

  it('an unreachable hub: exit 2 with a one-line message', async () => {
    const url = `http://127.0.0.1:${await closedPort()}`;
    const env = freshEnv();
    const hint = 'Is the hub running (npm start)? Point the CLI at it with --url or SWITCHBOARD_URL.';
    const login = await runCli(['login', '--username', 'a', '--password', 'b', '--url', url], env);
    expect(login.code).toBe(2);
    expect(login.stderr).toBe(`Cannot reach the hub at ${url}: ECONNREFUSED. ${hint}\n`);
    // Checked before the password is asked for: with none given (nothing on stdin), the hub is what is reported.
    const asked = await runCli(['login', '--username', 'a'], freshEnv({ SWITCHBOARD_URL: url }));
    expect({ code: asked.code, stderr: asked.stderr }).toEqual({ code: 2, stderr: `Cannot reach the hub at ${url}: ECONNREFUSED. ${hint}\n` });
    const sync = await runCli(['workflows', 'sync', EXAMPLES, '--url', url], freshEnv({ SWITCHBOARD_API_KEY: 'svc_live_whatever' }));
    expect(sync.code).toBe(2);
    expect(sync.stderr).toBe(`Cannot reach the hub at ${url}: ECONNREFUSED.\n`);
  });
});

describe('credentials for the other commands', () => {
  it('without a login or API key: exit 2 saying how to log in', async () => {
    const run = await runCli(['workflows', 'export', makeTempDir()], freshEnv());
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`Not logged in to ${hubUrl}: run \`switchboard login --url ${hubUrl}\` or set SWITCHBOARD_API_KEY.`);
  });

  it('SWITCHBOARD_API_KEY works without a login; a wrong or malformed key exits 2', async () => {
    const created = await request(`${hub.api}/auth/api-keys`, jsonBody({ label: 'cli test' }, { authorization: `Bearer ${admin.token}` }));
    expect(created.status).toBe(201);
    const key: string = created.body.data.key;
    const good = await runCli(['workflows', 'sync', EXAMPLES, '--dry-run'], freshEnv({ SWITCHBOARD_API_KEY: key }));
    expect(good).toMatchObject({ code: 0, stderr: '' });
    expect(good.stdout).toContain('Dry run (nothing changed)');
    expectNoSecrets(good, [key]);

    const wrong = await runCli(['workflows', 'sync', EXAMPLES, '--dry-run'], freshEnv({ SWITCHBOARD_API_KEY: `svc_live_${'x'.repeat(43)}` }));
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toBe(`The hub at ${hubUrl} did not accept SWITCHBOARD_API_KEY: UNAUTHORIZED.\n`);

    const malformed = await runCli(['workflows', 'diff', EXAMPLES], freshEnv({ SWITCHBOARD_API_KEY: 'not-a-key' }));
    expect(malformed.code).toBe(2);
    expect(malformed.stderr).toContain('SWITCHBOARD_API_KEY / --api-key is not an API key');
    expectNoSecrets(malformed, ['not-a-key']);
  });

  it('an expired access token is refreshed with the refresh token and the new pair is stored', async () => {
    const env = freshEnv();
    expect((await runCli(['login', '--username', 'cli_auth_admin', '--password', PASSWORD], env)).code).toBe(0);
    const before = storedLogin(env);
    const now = Math.floor(Date.now() / 1000);
    const expired = signTestJwt({ sub: admin.id, role: 'admin', typ: 'access', iss: 'switchboard', aud: 'switchboard-api', iat: now - 1200, exp: now - 600 });
    expect((await request(`${hub.api}/auth/me`, bearer(expired))).body.error.code).toBe('TOKEN_EXPIRED');
    const file = path.join(env.SWITCHBOARD_CONFIG_DIR!, 'credentials.json');
    const contents = JSON.parse(readFileSync(file, 'utf8'));
    contents.hubs[hubUrl].access_token = expired;
    writeFileSync(file, JSON.stringify(contents));

    const run = await runCli(['workflows', 'diff', EXAMPLES], env);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    const after = storedLogin(env);
    expect(after.access_token).not.toBe(expired);
    expect(after.refresh_token).not.toBe(before.refresh_token);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    // The old refresh token was spent by the CLI: the hub no longer takes it.
    expect((await request(`${hub.api}/auth/refresh`, jsonBody({ refresh_token: before.refresh_token }))).status).toBe(401);
  });

  it('an expired login that cannot be refreshed: exit 2 asking to log in again, stale login forgotten', async () => {
    const env = freshEnv();
    expect((await runCli(['login', '--username', 'cli_auth_admin', '--password', PASSWORD], env)).code).toBe(0);
    const file = path.join(env.SWITCHBOARD_CONFIG_DIR!, 'credentials.json');
    const contents = JSON.parse(readFileSync(file, 'utf8'));
    const now = Math.floor(Date.now() / 1000);
    contents.hubs[hubUrl].access_token = signTestJwt({
      sub: admin.id,
      role: 'admin',
      typ: 'access',
      iss: 'switchboard',
      aud: 'switchboard-api',
      iat: now - 1200,
      exp: now - 600,
    });
    contents.hubs[hubUrl].refresh_token = 'not-a-real-refresh-token';
    writeFileSync(file, JSON.stringify(contents));
    const run = await runCli(['workflows', 'diff', EXAMPLES], env);
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(`Your login to ${hubUrl} has expired: run \`switchboard login --url ${hubUrl}\` again.\n`);
    expect(JSON.parse(readFileSync(file, 'utf8')).hubs[hubUrl]).toBeUndefined();
  });

  it('a user who is not an admin: exit 2 (forbidden), nothing changed', async () => {
    await registerUser(hub.api, 'cli_plain_user');
    const env = freshEnv();
    expect((await runCli(['login', '--username', 'cli_plain_user', '--password', 'pw-cli_plain_user-long-enough'], env)).code).toBe(0);
    const run = await runCli(['workflows', 'sync', EXAMPLES], env);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^Not allowed \(FORBIDDEN\): .*need an admin account/);
    const list = await request(`${hub.api}/assistant/workflows`, bearer(admin.token));
    expect(list.body.data.total).toBe(0);
    // Reading is allowed to any user: export works.
    expect((await runCli(['workflows', 'export', makeTempDir()], env)).code).toBe(0);
  });

  it('a URL that is not a Switchboard hub: exit 2, whether it answers 404 JSON or an HTML page', async () => {
    const wrongPath = await runCli(
      ['workflows', 'export', makeTempDir(), '--url', `${hubUrl}/elsewhere`],
      freshEnv({ SWITCHBOARD_API_KEY: 'svc_live_anything' }),
    );
    expect(wrongPath.code).toBe(2);
    expect(wrongPath.stderr).toBe(`${hubUrl}/elsewhere has no Switchboard API (404 NOT_FOUND): check --url or SWITCHBOARD_URL.\n`);

    const page = createServer((_request, response) => response.writeHead(200, { 'content-type': 'text/html' }).end('<h1>Welcome</h1>'));
    await new Promise<void>((resolve) => page.listen(0, '127.0.0.1', resolve));
    const pageUrl = `http://127.0.0.1:${(page.address() as AddressInfo).port}`;
    try {
      const run = await runCli(['workflows', 'export', makeTempDir(), '--url', pageUrl], freshEnv({ SWITCHBOARD_API_KEY: 'svc_live_anything' }));
      expect(run.code).toBe(2);
      expect(run.stderr).toBe(`${pageUrl} does not answer like a Switchboard hub (HTTP 200 to GET /api/v1/assistant/workflows?limit=100).\n`);
    } finally {
      await new Promise((resolve) => page.close(resolve));
    }
  });
});
