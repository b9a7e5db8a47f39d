import { runCli, startHubProcess, type HubProcess } from '../helpers/cli';
import { jsonBody, request } from '../helpers/http';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir';
import { registerUser, type TestUser } from '../helpers/users';

/**
 * `switchboard approvals list | allow | deny` (issue 30) against a real hub process and its builtin
 * model: an approver lists what waits for them and allows it by an id prefix; the tool runs.
 */
let hub: HubProcess;
let admin: TestUser;
let ann: TestUser;

beforeAll(async () => {
  hub = await startHubProcess();
  admin = await registerUser(hub.api, 'cli_root');
  ann = await registerUser(hub.api, 'cli_ann');
  await registerUser(hub.api, 'cli_bob');
  const workflow = { name: 'notes', tool_list: 'write_file', approvals: [{ tools: ['write_file'], approvers: { users: ['cli_bob'] } }] };
  expect((await request(`${hub.api}/assistant/workflows`, jsonBody(workflow, { authorization: `Bearer ${admin.token}` }))).status).toBe(201);
}, 120_000);

afterAll(async () => {
  await hub.stop();
  removeTempDirs();
});

async function loggedIn(username: string): Promise<Record<string, string>> {
  const env = { SWITCHBOARD_CONFIG_DIR: makeTempDir('switchboard-cli-config-'), SWITCHBOARD_URL: hub.url };
  const login = await runCli(['login', '--username', username, '--password', `pw-${username}-long-enough`], env);
  if (login.code !== 0) throw new Error(`login failed: ${login.stderr}`);
  return env;
}

it('lists the approvals waiting for you and allows one by its id prefix', async () => {
  const bob = await loggedIn('cli_bob');
  const anns = await loggedIn('cli_ann');
  const as = { authorization: `Bearer ${ann.token}` };
  const id = (await request(`${hub.api}/sessions`, jsonBody({}, as))).body.data.id;
  const text = 'write a file approved.txt containing shipped';
  expect((await request(`${hub.api}/sessions/${id}/messages`, jsonBody({ text, metadata: { workflow: 'notes' } }, as))).status).toBe(202);
  let pending: any = null;
  for (let attempt = 0; attempt < 400 && !pending?.approval; attempt += 1) {
    pending = (await request(`${hub.api}/sessions/${id}`, { headers: as })).body.data.pending_confirmation;
    if (!pending?.approval) await new Promise((resolve) => setTimeout(resolve, 25));
  }
  expect((await runCli(['approvals', 'list'], anns)).stdout).toContain('No pending approvals for you.');
  const listed = await runCli(['approvals', 'list'], bob);
  expect(listed.code).toBe(0);
  expect(listed.stdout).toContain(pending.confirmation_id.slice(0, 8));
  expect(listed.stdout).toContain('write_file');
  expect(listed.stdout).toContain('0 of 1');
  const refused = await runCli(['approvals', 'allow', pending.confirmation_id.slice(0, 8)], anns);
  expect(refused.code).not.toBe(0);
  const allowed = await runCli(['approvals', 'allow', pending.confirmation_id.slice(0, 8)], bob);
  expect(allowed.code).toBe(0);
  expect(allowed.stdout).toContain('decided: allow');
  for (let attempt = 0; attempt < 400; attempt += 1) {
    const session = (await request(`${hub.api}/sessions/${id}`, { headers: as })).body.data;
    if (session.state === 'idle') break;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  const history = (await request(`${hub.api}/sessions/${id}/messages`, { headers: as })).body.data.items;
  const round = history.find((message: { tool_calls: unknown[] }) => message.tool_calls.length > 0);
  expect(round.tool_calls[0]).toMatchObject({ tool_name: 'write_file', error: null });
}, 120_000);

it('switchboard identities link | list | unlink binds a platform user to a hub user (admins)', async () => {
  const root = await loggedIn('cli_root');
  const linked = await runCli(['identities', 'link', 'cli_bob', 'telegram:424242'], root);
  expect(linked).toMatchObject({ code: 0, stdout: "telegram:424242 is cli_bob now: their approval clicks count as that user's.\n" });
  const listed = await runCli(['identities', 'list', 'CLI_BOB'], root);
  expect(listed.stdout).toMatch(/telegram:424242/);
  // One hub user per platform user.
  const taken = await runCli(['identities', 'link', 'cli_ann', 'telegram:424242'], root);
  expect(taken.code).not.toBe(0);
  expect(taken.stderr).toContain('bound to another hub user');
  const badForm = await runCli(['identities', 'link', 'cli_bob', 'irc:nick'], root);
  expect(badForm.stderr).toContain('channel one of slack, telegram, mattermost');
  // Not an admin: refused.
  expect((await runCli(['identities', 'list', 'cli_bob'], await loggedIn('cli_ann'))).code).not.toBe(0);
  expect((await runCli(['identities', 'unlink', 'cli_bob', 'telegram:424242'], root)).code).toBe(0);
  expect((await runCli(['identities', 'list', 'cli_bob'], root)).stdout).toContain('No platform users are bound to cli_bob.');
}, 120_000);
