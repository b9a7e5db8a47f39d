import { createHmac, randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { startService, type RunningService } from '../../../src/main';
import { FAKE_SLACK, FakeSlackApi, type SlackApiCall } from '../../fakes/slack-api';
import { ScriptedProvider } from '../../fakes/scripted-provider';
import { TestTools } from '../../fakes/test-tools';
import { auditRows } from '../../helpers/audit';
import { GENEROUS_RATE_LIMITS } from '../../helpers/auth-service';
import { testEnv } from '../../helpers/env';
import { jsonBody, request } from '../../helpers/http';
import { LogCapture } from '../../helpers/log-capture';
import { makeTempDir, removeTempDirs } from '../../helpers/temp-dir';
import { registerUser, type TestUser } from '../../helpers/users';

/**
 * Approvals in Slack (issue 30): a Slack user group's members at click time approve; the requester's
 * own click and a non-member's are refused ephemerally and change nothing; a quorum needs distinct
 * members; a failure to list the group refuses (fail-closed); a hub admin approves over the API
 * while the turn waits in Slack.
 */
const SIGNING_SECRET = randomBytes(16).toString('hex');
const BOT_TOKEN = `xoxb-${randomBytes(8).toString('hex')}`;
let slack: FakeSlackApi;
let service: RunningService;
let base: string;
let admin: TestUser;
const provider = new ScriptedProvider();
const tools = new TestTools();
let tsCounter = 0;
let eventCounter = 0;

beforeAll(async () => {
  slack = new FakeSlackApi();
  await slack.start();
  const cwd = makeTempDir();
  writeFileSync(path.join(cwd, 'config.yaml'), 'channels:\n  slack:\n    edit_interval_ms: 200\n');
  service = await startService({
    env: testEnv(makeTempDir(), {
      ...GENEROUS_RATE_LIMITS,
      SERVICE_SLACK_BOT_TOKEN: BOT_TOKEN,
      SERVICE_SLACK_SIGNING_SECRET: SIGNING_SECRET,
      SERVICE_SLACK_API_URL: slack.url,
    }),
    cwd,
    logDestination: new LogCapture(),
    provider,
    tools,
  });
  base = `http://127.0.0.1:${service.port}/api/v1`;
  admin = await registerUser(base, 'root');
  const workflow = {
    name: 'ops',
    tool_list: 'lookup,save_note,web_lookup',
    binding_channels: ['slack'],
    triggers: { keywords: ['deploy'] },
    approvals: [
      { tools: ['save_note'], approvers: { slack_usergroup: 'S0SRE' }, quorum: 2 },
      { tools: ['lookup'], approvers: { slack_usergroup: 'S0OTHER', roles: ['admin'] } },
      { tools: ['web_lookup'], approvers: { users: ['alice', 'root'] } },
    ],
  };
  expect((await request(`${base}/assistant/workflows`, jsonBody(workflow, { authorization: `Bearer ${admin.token}` }))).status).toBe(201);
});

afterAll(async () => {
  await service?.stop();
  await slack?.stop();
  removeTempDirs();
});

function sign(body: string): Record<string, string> {
  const timestamp = Math.floor(Date.now() / 1000);
  return {
    'x-slack-request-timestamp': String(timestamp),
    'x-slack-signature': `v0=${createHmac('sha256', SIGNING_SECRET).update(`v0:${timestamp}:${body}`).digest('hex')}`,
  };
}

/** U1 asks in channel C7 (a mention): the turn runs in a thread there. */
async function askInChannel(text: string) {
  tsCounter += 1;
  const ts = `1710000000.${String(tsCounter).padStart(6, '0')}`;
  const event = {
    type: 'app_mention',
    channel_type: 'channel',
    channel: 'C7',
    user: 'U1',
    text: `<@${FAKE_SLACK.botUserId}> ${text}`,
    ts,
    team: FAKE_SLACK.teamId,
  };
  const body = JSON.stringify({
    token: 't',
    team_id: FAKE_SLACK.teamId,
    api_app_id: 'A1',
    type: 'event_callback',
    event_id: `EvA${++eventCounter}`,
    event_time: 1,
    event,
  });
  expect(
    (await request(`${base}/channels/slack/events`, { method: 'POST', headers: { 'content-type': 'application/json', ...sign(body) }, body })).status,
  ).toBe(200);
  const question = await slack.waitFor((call) => call.method === 'chat.postMessage' && call.args.thread_ts === ts && Array.isArray(call.args.blocks));
  return { ts, question };
}

async function click(question: SlackApiCall, user: string, action = 'allow') {
  const button = question.args.blocks
    .flatMap((block: any) => block.elements ?? [])
    .find((element: any) => element.action_id === `switchboard_confirm_${action}`);
  const payload = {
    type: 'block_actions',
    team: { id: FAKE_SLACK.teamId },
    user: { id: user, name: user.toLowerCase() },
    api_app_id: 'A1',
    trigger_id: 't1',
    container: { type: 'message', message_ts: '1', channel_id: 'C7' },
    channel: { id: 'C7', name: 'ops' },
    message: { ts: 'question-ts', thread_ts: question.args.thread_ts, text: question.args.text },
    actions: [{ type: 'button', action_id: button.action_id, block_id: 'b', value: button.value, action_ts: '1' }],
  };
  const body = new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
  const before = slack.workspace.ephemerals.length;
  expect(
    (
      await request(`${base}/channels/slack/interactions`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...sign(body) },
        body,
      })
    ).status,
  ).toBe(200);
  return before;
}

async function ephemeralAfter(before: number, user: string) {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const found = slack.workspace.ephemerals.slice(before).find((note) => note.user === user);
    if (found) return found;
    if (Date.now() > deadline) throw new Error(`no ephemeral message for ${user}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

it('refuses a click when Slack cannot list the group (fail-closed), and a hub admin approves over the API', async () => {
  slack.usergroupsError = 'ratelimited';
  // Slack cannot list the groups' handles either (no usergroups:read): the question names the group by its id.
  slack.usergroupsListError = 'missing_scope';
  provider.rounds = [{ calls: [{ id: 'slack-lookup', name: 'lookup', arguments: JSON.stringify({ word: 'rollback' }) }] }, { text: ['Looked it up.'] }];
  const { question } = await askInChannel('deploy: look up rollback');
  expect(question.args.blocks[0].text.text).toContain('Waiting for approval by role admin, Slack group S0OTHER (0 of 1)');
  slack.usergroupsListError = null;
  const refused = await ephemeralAfter(await click(question, 'U2'), 'U2');
  expect(refused.text).toContain('Slack did not list the members of user group S0OTHER: ratelimited');
  slack.usergroupsError = null;
  const pending = (await request(`${base}/approvals`, { headers: { authorization: `Bearer ${admin.token}` } })).body.data.items;
  expect(pending).toHaveLength(1);
  const decided = await request(`${base}/approvals/${pending[0].id}`, jsonBody({ action: 'allow' }, { authorization: `Bearer ${admin.token}` }));
  expect(decided.body.data).toMatchObject({ decided: 'allow' });
  await slack.waitForReply('C7', 'Looked it up.');
  expect(tools.runs).toContainEqual({ tool: 'lookup', input: { word: 'rollback' } });
});

it('a user group’s members approve with a quorum of two; the requester and non-members are refused privately', async () => {
  const runsBefore = tools.runs.length;
  slack.usergroups.set('S0SRE', ['U1', 'U2']);
  slack.usergroupHandles.set('S0SRE', 'sre-oncall');
  provider.rounds = [
    { calls: [{ id: 'slack-save', name: 'save_note', arguments: JSON.stringify({ text: 'release 1.2' }) }] },
    { text: ['Saved the release note.'] },
  ];
  const { ts, question } = await askInChannel('deploy notes please');
  expect(question.args.blocks[0].text.text).toContain('Waiting for approval by @sre-oncall (0 of 2)');
  // The group changes between the request and the first click: U4 joins.
  slack.usergroups.set('S0SRE', ['U1', 'U2', 'U4']);
  expect((await ephemeralAfter(await click(question, 'U1'), 'U1')).text).toContain('Your own request');
  expect((await ephemeralAfter(await click(question, 'U3'), 'U3')).text).toContain('not among the approvers');
  expect((await ephemeralAfter(await click(question, 'U2'), 'U2')).text).toBe('Your approval counts: 1 of 2.');
  await slack.waitFor(
    (call) =>
      call.method === 'chat.postMessage' &&
      call.args.thread_ts === ts &&
      String(call.args.text).includes('Approved by u2 (1 of 2). Waiting for approval by @sre-oncall (1 of 2).'),
  );
  expect((await ephemeralAfter(await click(question, 'U2'), 'U2')).text).toBe('Your approval counts: 1 of 2.');
  expect(tools.runs).toHaveLength(runsBefore);
  await click(question, 'U4');
  await slack.waitForReply('C7', 'Saved the release note.');
  expect(tools.runs.slice(runsBefore)).toEqual([{ tool: 'save_note', input: { text: 'release 1.2' } }]);
  // The question's buttons became the outcome.
  await slack.waitFor((call) => call.method === 'chat.update' && call.args.ts === 'question-ts' && String(call.args.text).includes('allow'));
  const rows = (await auditRows(base, admin.token, { kind: 'approval.click' }, 6)).filter((row) => row.subject === 'save_note');
  expect(rows.map((row) => `${row.actor.key}:${row.action}`).sort()).toEqual([
    'slack:U1:refused',
    'slack:U2:counted',
    'slack:U2:counted',
    'slack:U3:refused',
    'slack:U4:counted',
  ]);
});

it('a Slack user bound to a hub user approves as that user (`users:`); the requester bound to an admin cannot approve their own request over the API', async () => {
  const alice = await registerUser(base, 'alice');
  const asAdmin = { authorization: `Bearer ${admin.token}` };
  const bind = (user: TestUser, platformUserId: string) =>
    request(`${base}/users/${user.id}/identities`, jsonBody({ channel: 'slack', platform_user_id: platformUserId }, asAdmin));
  expect((await bind(alice, 'U7')).status).toBe(201);
  expect((await bind(admin, 'U1')).status).toBe(201);
  // A platform user belongs to one hub user.
  expect((await bind(admin, 'U7')).body.error.code).toBe('CONFLICT');
  expect((await request(`${base}/users/${alice.id}/identities`, { headers: asAdmin })).body.data).toEqual([
    expect.objectContaining({ channel: 'slack', platform_user_id: 'U7', user_id: alice.id }),
  ]);

  const runsBefore = tools.runs.length;
  provider.rounds = [
    { calls: [{ id: 'slack-web', name: 'web_lookup', arguments: JSON.stringify({ query: 'status page' }) }] },
    { text: ['Looked on the web.'] },
  ];
  const { question } = await askInChannel('deploy: check the status page');
  expect(question.args.blocks[0].text.text).toContain('Waiting for approval by @alice, @root (0 of 1)');
  // U1 asked, and U1 is root: root's own click over the API is the requester's own.
  const pending = (await request(`${base}/approvals`, { headers: asAdmin })).body.data.items;
  const own = await request(`${base}/approvals/${pending[0].id}`, jsonBody({ action: 'allow' }, asAdmin));
  expect(own.status).toBe(403);
  expect(own.body.error.message).toContain('Your own request');
  // U8 is bound to nobody: refused.
  expect((await ephemeralAfter(await click(question, 'U8'), 'U8')).text).toContain('not among the approvers');
  expect(tools.runs).toHaveLength(runsBefore);
  // U7 is alice: counted, and the tool runs.
  await click(question, 'U7');
  await slack.waitForReply('C7', 'Looked on the web.');
  expect(tools.runs.slice(runsBefore)).toEqual([{ tool: 'web_lookup', input: { query: 'status page' } }]);
  const rows = (await auditRows(base, admin.token, { kind: 'approval.click' }, 9, (row) => row.actor.key === 'slack:U7')).filter(
    (row) => row.subject === 'web_lookup',
  );
  expect(rows.map((row) => `${row.actor.key}:${row.action}:${row.details.hub_user}`).sort()).toEqual([
    'slack:U7:counted:alice',
    'slack:U8:refused:null',
    `user:${admin.id}:refused:root`,
  ]);

  // Unbound: U7's clicks are no longer alice's.
  expect((await request(`${base}/users/${alice.id}/identities/slack/U7`, { method: 'DELETE', headers: asAdmin })).status).toBe(204);
  expect((await request(`${base}/users/${alice.id}/identities`, { headers: asAdmin })).body.data).toEqual([]);
});
