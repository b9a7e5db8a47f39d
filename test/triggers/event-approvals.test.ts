import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { startService, type RunningService } from '../../src/main';
import { FakeSlackApi, type SlackApiCall } from '../fakes/slack-api';
import { ScriptedProvider } from '../fakes/scripted-provider';
import { TestTools } from '../fakes/test-tools';
import { auditRows } from '../helpers/audit';
import { ChatWebhooks } from '../helpers/chat-webhooks';
import { GENEROUS_RATE_LIMITS } from '../helpers/auth-service';
import { testEnv } from '../helpers/env';
import { jsonBody, request } from '../helpers/http';
import { LogCapture } from '../helpers/log-capture';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir';
import { registerUser, type TestUser } from '../helpers/users';

/**
 * Approvals of event turns (issue 30 with issue 29): a webhook's turn calls a tool under a policy;
 * the approval is asked once, with buttons, in the chat the event is delivered to; a Slack group
 * member's click counts there (shown as a note under the question, never as a second question), a
 * non-member's is refused privately, a hub admin completes the quorum over the API, and only then
 * the tool runs and the answer is delivered. Nobody sent the event, so nobody's click is "the
 * requester's own".
 */
const SIGNING_SECRET = randomBytes(16).toString('hex');
const HOOK_TOKEN = randomBytes(16).toString('hex');
const CHANNEL = 'C0INCIDENTS';

let slack: FakeSlackApi;
let service: RunningService;
let admin: TestUser;
let base: string;
const provider = new ScriptedProvider();
const tools = new TestTools();

beforeAll(async () => {
  slack = new FakeSlackApi();
  await slack.start();
  const cwd = makeTempDir();
  writeFileSync(path.join(cwd, 'config.yaml'), 'agent:\n  default_tools: [save_note]\n');
  service = await startService({
    env: testEnv(makeTempDir(), {
      ...GENEROUS_RATE_LIMITS,
      SERVICE_SLACK_BOT_TOKEN: `xoxb-${randomBytes(8).toString('hex')}`,
      SERVICE_SLACK_SIGNING_SECRET: SIGNING_SECRET,
      SERVICE_SLACK_API_URL: slack.url,
      ALERT_HOOK_TOKEN: HOOK_TOKEN,
    }),
    cwd,
    logDestination: new LogCapture(),
    provider,
    tools,
  });
  base = `http://127.0.0.1:${service.port}/api/v1`;
  admin = await registerUser(base, 'root');
  const workflow = {
    name: 'incidents',
    system_prompt: 'Handle incidents.',
    tool_list: 'save_note',
    approvals: [{ tools: ['save_note'], approvers: { roles: ['admin'], slack_usergroup: 'S0ONCALL' }, quorum: 2 }],
    events: {
      webhooks: [{ name: 'alert', verify: 'token', secret_env: 'ALERT_HOOK_TOKEN', message: 'Alert {{ payload.name }}', deliver: `slack:${CHANNEL}` }],
    },
  };
  expect((await request(`${base}/assistant/workflows`, jsonBody(workflow, auth()))).status).toBe(201);
});

afterAll(async () => {
  await service?.stop();
  await slack?.stop();
  removeTempDirs();
});

function auth(): Record<string, string> {
  return { authorization: `Bearer ${admin.token}` };
}

async function click(question: SlackApiCall, user: string): Promise<void> {
  const button = question.args.blocks.flatMap((block: any) => block.elements ?? []).find((element: any) => element.action_id === 'switchboard_confirm_allow');
  const payload = {
    type: 'block_actions',
    team: { id: 'T1' },
    user: { id: user, name: user.toLowerCase() },
    api_app_id: 'A1',
    trigger_id: 't1',
    container: { type: 'message', message_ts: '1', channel_id: CHANNEL },
    channel: { id: CHANNEL, name: 'incidents' },
    message: { ts: 'question-ts', text: question.args.text },
    actions: [{ type: 'button', action_id: button.action_id, block_id: 'b', value: button.value, action_ts: '1' }],
  };
  await new ChatWebhooks(SIGNING_SECRET, 'unused').slackClick(base.replace(/\/api\/v1$/, ''), payload);
}

async function until<T>(find: () => Promise<T | undefined> | T | undefined, what: string): Promise<T> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const found = await find();
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

const questions = () => slack.callsOf('chat.postMessage').filter((call) => call.args.channel === CHANNEL && Array.isArray(call.args.blocks));

test('a webhook turn asks its approvers in the delivery chat; a Slack member and a hub admin over the API make the quorum', async () => {
  slack.usergroups.set('S0ONCALL', ['U2', 'U3']);
  slack.usergroupHandles.set('S0ONCALL', 'oncall');
  provider.rounds = [
    { calls: [{ id: 'ev1', name: 'save_note', arguments: JSON.stringify({ text: 'page the db team' }) }] },
    { text: ['Paged ', 'the db team.'] },
  ];
  const fired = await request(`${base}/hooks/incidents/alert`, jsonBody({ name: 'DiskFull' }, { authorization: `Bearer ${HOOK_TOKEN}` }));
  expect(fired.status).toBe(202);
  const question = await slack.waitFor((call) => call.method === 'chat.postMessage' && call.args.channel === CHANNEL && Array.isArray(call.args.blocks));
  expect(question.args.blocks[0].text.text).toContain('Waiting for approval by role admin, @oncall (0 of 2)');

  // U9 is not in the group: refused privately; nothing counted.
  await click(question, 'U9');
  const refused = await until(() => slack.workspace.ephemerals.find((note) => note.user === 'U9'), 'the refusal');
  expect(refused.text).toContain('not among the approvers');

  // U2 is: counted, and the progress is a note in the chat, not a second question.
  await click(question, 'U2');
  await slack.waitFor(
    (call) => call.method === 'chat.postMessage' && call.args.channel === CHANNEL && String(call.args.text).includes('Approved by u2 (1 of 2)'),
  );
  expect(tools.runs).toHaveLength(0);

  // The admin sees it among their pending approvals and completes the quorum over the API.
  const pending = (await request(`${base}/approvals?state=pending`, { headers: auth() })).body.data.items;
  expect(pending).toEqual([
    expect.objectContaining({ tool: 'save_note', workflow: 'incidents', progress: expect.objectContaining({ approvals: 1, quorum: 2 }) }),
  ]);
  const decided = await request(`${base}/approvals/${pending[0].id}`, jsonBody({ action: 'allow' }, auth()));
  expect(decided.body.data).toMatchObject({ decided: 'allow' });

  const delivery = await until(async () => {
    const found = await request(`${base}/hooks/deliveries/${fired.body.data.delivery_id}`, { headers: auth() });
    return found.body.data?.status === 'delivered' ? found.body.data : undefined;
  }, 'the delivery');
  expect(delivery.status).toBe('delivered');
  expect(tools.runs).toEqual([{ tool: 'save_note', input: { text: 'page the db team' } }]);
  // The answer is shown live (issue 29): posted, then edited to its final text in the delivery's message.
  expect(slack.workspace.messagesIn(CHANNEL).some((message) => message.text === 'Paged the db team.')).toBe(true);
  // One question in all, however often the progress was sent.
  expect(questions()).toHaveLength(1);

  const clicks = await auditRows(base, admin.token, { kind: 'approval.click' }, 3);
  expect(clicks.map((row) => `${row.actor.key}:${row.action}`).sort()).toEqual(['slack:U2:counted', 'slack:U9:refused', `user:${admin.id}:counted`]);
  const requested = (await auditRows(base, admin.token, { kind: 'approval.requested' }, 1))[0]!;
  expect(requested.details).toMatchObject({ workflow: 'incidents', requester: 'channel:events', policy: { index: 0, tools: ['save_note'], quorum: 2 } });
});
