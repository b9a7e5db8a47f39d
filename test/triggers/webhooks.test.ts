import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { startService, type RunningService } from '../../src/main';
import { FakeSlackApi } from '../fakes/slack-api';
import { ScriptedProvider } from '../fakes/scripted-provider';
import { GENEROUS_RATE_LIMITS } from '../helpers/auth-service';
import { testEnv } from '../helpers/env';
import { jsonBody, request } from '../helpers/http';
import { LogCapture } from '../helpers/log-capture';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir';
import { registerUser, type TestUser } from '../helpers/users';
import { ChatWebhooks } from '../helpers/chat-webhooks';
import { TestTools } from '../fakes/test-tools';
import { writeFileSync } from 'node:fs';
import path from 'node:path';

/** Workflow webhooks through the whole hub: signed requests in, the fake model's answer posted into a fake Slack channel. */
const GITHUB_SECRET = randomBytes(16).toString('hex');
const STANDARD_SECRET = `whsec_${randomBytes(24).toString('base64')}`;
const TOKEN_SECRET = randomBytes(16).toString('hex');
const SIGNING_SECRET = randomBytes(16).toString('hex');
const CHANNEL = 'C0EVENTS';

let slack: FakeSlackApi;
let service: RunningService;
let provider: ScriptedProvider;
let tools: TestTools;
let admin: TestUser;
let base: string;
let root: string;

beforeAll(async () => {
  slack = new FakeSlackApi();
  await slack.start();
  provider = new ScriptedProvider();
  tools = new TestTools();
  const cwd = makeTempDir();
  writeFileSync(path.join(cwd, 'config.yaml'), 'agent:\n  default_tools: [save_note]\n');
  service = await startService({
    env: testEnv(makeTempDir(), {
      ...GENEROUS_RATE_LIMITS,
      SERVICE_SLACK_BOT_TOKEN: `xoxb-${randomBytes(8).toString('hex')}`,
      SERVICE_SLACK_SIGNING_SECRET: SIGNING_SECRET,
      SERVICE_SLACK_API_URL: slack.url,
      DEPLOY_HOOK_SECRET: GITHUB_SECRET,
      STANDARD_HOOK_SECRET: STANDARD_SECRET,
      TOKEN_HOOK_SECRET: TOKEN_SECRET,
    }),
    cwd,
    logDestination: new LogCapture(),
    provider,
    tools,
  });
  root = `http://127.0.0.1:${service.port}`;
  base = `${root}/api/v1`;
  admin = await registerUser(base, 'root');
  const created = await request(
    `${base}/assistant/workflows`,
    jsonBody(
      {
        name: 'deploys',
        system_prompt: 'Summarise deploys.',
        tool_list: 'save_note',
        events: {
          webhooks: [
            {
              name: 'github',
              verify: 'github',
              secret_env: 'DEPLOY_HOOK_SECRET',
              message: 'Deploy of {{ payload.repository.full_name }} to {{ payload.deployment.environment }}: {{ payload.deployment_status.state }}',
              deliver: `slack:${CHANNEL}`,
              thread: '{{ payload.deployment.id }}',
            },
            { name: 'standard', verify: 'standard', secret_env: 'STANDARD_HOOK_SECRET', message: 'Event {{ payload.kind }}', deliver: `slack:${CHANNEL}` },
            {
              name: 'token',
              verify: 'token',
              secret_env: 'TOKEN_HOOK_SECRET',
              message: 'Ping {{ payload.n }}',
              deliver: `slack:${CHANNEL}`,
              rate_limit: '2/minute',
            },
            { name: 'open', verify: 'none', message: 'Open {{ payload.n }}', deliver: `slack:${CHANNEL}` },
            {
              name: 'alerts',
              verify: 'token',
              secret_env: 'TOKEN_HOOK_SECRET',
              message:
                '{% if payload.status == "resolved" %}RESOLVED: {{ payload.commonLabels.alertname }} is over; close the incident with a short note.{% else %}FIRING: {{ payload.commonLabels.alertname }} ({{ payload.commonLabels.severity }}): {{ payload.commonAnnotations.summary }}{% endif %}',
              deliver: `slack:${CHANNEL}`,
              thread: '{{ payload.groupKey }}',
            },
          ],
        },
      },
      { authorization: `Bearer ${admin.token}` },
    ),
  );
  expect(created.status).toBe(201);
});

afterAll(async () => {
  await service?.stop();
  await slack?.stop();
  removeTempDirs();
});

function githubPayload(deploymentId: number, state: string) {
  return JSON.stringify({ repository: { full_name: 'acme/api' }, deployment: { id: deploymentId, environment: 'production' }, deployment_status: { state } });
}

function githubHeaders(body: string, deliveryId: string, secret = GITHUB_SECRET): Record<string, string> {
  const signature = `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
  return { 'content-type': 'application/json', 'x-hub-signature-256': signature, 'x-github-delivery': deliveryId, 'x-github-event': 'deployment_status' };
}

function postHook(hook: string, body: string, headers: Record<string, string>) {
  return request(`${base}/hooks/deploys/${hook}`, { method: 'POST', headers, body });
}

async function delivery(id: string, status = 'delivered') {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const found = await request(`${base}/hooks/deliveries/${id}`, { headers: { authorization: `Bearer ${admin.token}` } });
    if (found.body.data?.status === status) return found.body.data;
    if (Date.now() > deadline) throw new Error(`delivery ${id} is ${JSON.stringify(found.body.data)}, not ${status}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function posts() {
  return slack.callsOf('chat.postMessage').filter((call) => call.args.channel === CHANNEL);
}

/** The channel's message that shows `text` now (posted, then edited as the answer streamed). */
function shown(text: string) {
  return slack.workspace.messagesIn(CHANNEL).find((message) => message.text === text);
}

test('a GitHub-signed webhook streams the answer into the channel; a second event of the same deployment replies in its thread', async () => {
  provider.pieces = ['Deploy ', 'is green.'];
  provider.pauseBefore = 1;
  const first = await postHook('github', githubPayload(42, 'success'), githubHeaders(githubPayload(42, 'success'), randomUUID()));
  expect(first.status).toBe(202);
  // Live, like a Slack turn of the channel's own: the placeholder, then the message edited as the answer grows.
  await provider.paused();
  const interim = await slack.waitFor((call) => call.method === 'chat.update' && call.args.channel === CHANNEL && /^Deploy/.test(call.args.text ?? ''));
  const placeholder = posts().find((call) => call.args.text === '_…_')!;
  expect(placeholder.args.thread_ts).toBeUndefined();
  expect(
    (await request(`${base}/hooks/deliveries/${first.body.data.delivery_id}`, { headers: { authorization: `Bearer ${admin.token}` } })).body.data.status,
  ).toBe('turn');
  provider.pauseBefore = null;
  provider.release();
  const firstDelivery = await delivery(first.body.data.delivery_id);
  expect(firstDelivery.platform_message_id).toBe(interim.args.ts);
  expect(firstDelivery.thread_key).toBe('42');
  const root = shown('Deploy is green.')!;
  expect(root.ts).toBe(firstDelivery.platform_message_id);
  expect(root.thread_ts).toBeUndefined();

  provider.pieces = ['Rolled ', 'back.'];
  const second = await postHook('github', githubPayload(42, 'failure'), githubHeaders(githubPayload(42, 'failure'), randomUUID()));
  expect(second.status).toBe(202);
  const secondDelivery = await delivery(second.body.data.delivery_id);
  expect(secondDelivery.session_id).toBe(firstDelivery.session_id);
  const reply = shown('Rolled back.')!;
  expect(reply.thread_ts).toBe(firstDelivery.platform_message_id);
  expect(reply.ts).toBe(secondDelivery.platform_message_id);
  // One message per answer: the placeholder became the answer, nothing was posted beside it.
  expect(slack.workspace.messagesIn(CHANNEL).filter((message) => [root.ts, reply.ts].includes(message.ts))).toHaveLength(2);
  expect(posts().filter((call) => call.args.text === 'Rolled back.' || call.args.text === 'Deploy is green.')).toHaveLength(0);

  // The event was the session's user message, in a session of the `events` channel keyed by the thread.
  const session = await request(`${base}/sessions/${firstDelivery.session_id}`, { headers: { authorization: `Bearer ${admin.token}` } });
  expect(session.body.data.channel).toBe('events');
  expect(session.body.data.session_key).toBe('events::deploys:github:42');
  const history = await request(`${base}/sessions/${firstDelivery.session_id}/messages`, { headers: { authorization: `Bearer ${admin.token}` } });
  expect(history.body.data.items[0].content).toBe('Deploy of acme/api to production: success');
});

test('a person replying in the event thread continues the same conversation', async () => {
  provider.pieces = ['Build ', 'passed.'];
  const event = await postHook('github', githubPayload(77, 'success'), githubHeaders(githubPayload(77, 'success'), randomUUID()));
  const done = await delivery(event.body.data.delivery_id);
  provider.pieces = ['It ', 'was ', 'deploy 77.'];
  const hooks = new ChatWebhooks(SIGNING_SECRET, 'unused');
  await hooks.slackEvent(root, {
    type: 'app_mention',
    user: 'U7',
    text: '<@UBOT> which deploy?',
    ts: `${Math.floor(Date.now() / 1000)}.000900`,
    thread_ts: done.platform_message_id,
    channel: CHANNEL,
    channel_type: 'channel',
  });
  await slack.waitForReply(CHANNEL, 'It was deploy 77.');
  const history = await request(`${base}/sessions/${done.session_id}/messages`, { headers: { authorization: `Bearer ${admin.token}` } });
  expect(history.body.data.items.map((message: { content: string }) => message.content)).toEqual([
    'Deploy of acme/api to production: success',
    'Build passed.',
    'which deploy?',
    'It was deploy 77.',
  ]);
});

test('a bad signature, a stale Standard Webhooks timestamp or a replayed webhook-id is 401 and posts nothing; a redelivery is 200 and posts nothing new', async () => {
  provider.pieces = ['Once.'];
  const body = githubPayload(5, 'success');
  const before = posts().length;
  const forged = await postHook('github', body, githubHeaders(body, randomUUID(), 'wrong-secret'));
  expect(forged.status).toBe(401);
  expect(forged.body.error.code).toBe('UNAUTHORIZED');
  const unsigned = await postHook('github', body, { 'content-type': 'application/json' });
  expect(unsigned.status).toBe(401);

  const webhook = new Webhook(STANDARD_SECRET);
  const standardBody = JSON.stringify({ kind: 'build' });
  const stale = new Date(Date.now() - 10 * 60 * 1000);
  const staleHeaders = {
    'webhook-id': 'msg_stale',
    'webhook-timestamp': String(Math.floor(stale.getTime() / 1000)),
    'webhook-signature': webhook.sign('msg_stale', stale, standardBody),
  };
  const staleAnswer = await postHook('standard', standardBody, { 'content-type': 'application/json', ...staleHeaders });
  expect(staleAnswer.status).toBe(401);
  expect(staleAnswer.body.error.message).toMatch(/timestamp/);

  const now = new Date();
  const signed = (payload: string, id: string) => ({
    'content-type': 'application/json',
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
    'webhook-signature': webhook.sign(id, now, payload),
  });
  const accepted = await postHook('standard', standardBody, signed(standardBody, 'msg_1'));
  expect(accepted.status).toBe(202);
  await delivery(accepted.body.data.delivery_id);
  const redelivered = await postHook('standard', standardBody, signed(standardBody, 'msg_1'));
  expect(redelivered.status).toBe(200);
  expect(redelivered.body.data.delivery_id).toBe(accepted.body.data.delivery_id);
  const otherBody = JSON.stringify({ kind: 'forged' });
  const replayed = await postHook('standard', otherBody, signed(otherBody, 'msg_1'));
  expect(replayed.status).toBe(401);
  expect(replayed.body.error.message).toMatch(/replay/);
  await new Promise((resolve) => setTimeout(resolve, 300));
  expect(posts().length).toBe(before + 1);
  const list = await request(`${base}/hooks/deliveries?workflow=deploys&status=delivered`, { headers: { authorization: `Bearer ${admin.token}` } });
  expect(list.body.data.items.filter((item: { name: string }) => item.name === 'standard')).toHaveLength(1);
});

test('unknown hooks are 404, unsigned hooks 401 unless allowed, bodies over 1 MiB 413, and a hook over its rate limit 429 with Retry-After', async () => {
  expect((await request(`${base}/hooks/deploys/nope`, jsonBody({}))).status).toBe(404);
  expect((await request(`${base}/hooks/nope/github`, jsonBody({}))).status).toBe(404);
  expect((await request(`${base}/hooks/deploys/open`, jsonBody({ n: 1 }))).status).toBe(401);
  const big = await postHook('github', 'x'.repeat(1_048_577), { 'content-type': 'application/json' });
  expect(big.status).toBe(413);
  const bearer = { 'content-type': 'application/json', authorization: `Bearer ${TOKEN_SECRET}` };
  expect((await postHook('token', '{"n":1}', { ...bearer, authorization: 'Bearer wrong' })).status).toBe(401);
  // The wrong token counted too: one more passes, the next is refused.
  const passed = await postHook('token', '{"n":2}', bearer);
  expect(passed.status).toBe(202);
  await delivery(passed.body.data.delivery_id);
  const limited = await postHook('token', '{"n":3}', bearer);
  expect(limited.status).toBe(429);
  expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
});

test('a Slack failure is retried and the answer posted once', async () => {
  provider.pieces = ['After ', 'retry.'];
  // The Web API client retries a 500 three times itself: the placeholder fails (4 × 500), the next post works.
  slack.failNext('chat.postMessage', [500, 500, 500, 500]);
  const body = githubPayload(9, 'success');
  const answer = await postHook('github', body, githubHeaders(body, randomUUID()));
  const done = await delivery(answer.body.data.delivery_id);
  expect(slack.workspace.messagesIn(CHANNEL).filter((message) => message.text === 'After retry.')).toHaveLength(1);
  expect(shown('After retry.')!.ts).toBe(done.platform_message_id);
  expect(slack.calls.filter((call) => call.method === 'chat.postMessage (500)')).toHaveLength(4);
});

test('when nothing reaches the chat while the turn runs, the answer is posted whole with retries, once', async () => {
  provider.pieces = ['Posted ', 'whole.'];
  // Every post of the live view fails (placeholder and the answer's own post: 4 × 500 each), then the deliverer's first post too.
  slack.failNext(
    'chat.postMessage',
    Array.from({ length: 12 }, () => 500),
  );
  const body = githubPayload(10, 'success');
  const answer = await postHook('github', body, githubHeaders(body, randomUUID()));
  const done = await delivery(answer.body.data.delivery_id);
  expect(done.attempts).toBe(2);
  expect(slack.workspace.messagesIn(CHANNEL).filter((message) => message.text === 'Posted whole.')).toHaveLength(1);
  expect(shown('Posted whole.')!.ts).toBe(done.platform_message_id);
});

test('a failed event turn is said in the chat, naming the hook and the error code', async () => {
  provider.pieces = ['Half ', 'an answer'];
  provider.failAt = 1;
  const body = githubPayload(11, 'success');
  const answer = await postHook('github', body, githubHeaders(body, randomUUID()));
  const failed = await delivery(answer.body.data.delivery_id, 'failed');
  provider.failAt = null;
  expect(failed.reason).toMatch(/^the turn failed: [A-Z_]+$/);
  const code = failed.reason.replace('the turn failed: ', '');
  const note = shown(`The github hook turn failed: ${code}.`)!;
  expect(note).toBeDefined();
  expect(note.ts).toBe(failed.platform_message_id);
  expect(JSON.stringify([...slack.workspace.messages.values()])).not.toContain('exploded');
});

test('an Alertmanager firing and resolved pair lands in one thread, the resolved one closing it with a note', async () => {
  const alert = (status: 'firing' | 'resolved') =>
    JSON.stringify({
      version: '4',
      groupKey: '{}:{alertname="HighErrorRate"}',
      status,
      receiver: 'switchboard',
      commonLabels: { alertname: 'HighErrorRate', severity: 'page' },
      commonAnnotations: { summary: '5% of requests fail' },
      alerts: [{ status, fingerprint: 'a1b2c3', labels: { alertname: 'HighErrorRate' } }],
    });
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${TOKEN_SECRET}` };
  provider.pieces = ['Investigating ', 'the error rate.'];
  const firing = await postHook('alerts', alert('firing'), headers);
  const opened = await delivery(firing.body.data.delivery_id);
  provider.pieces = ['Resolved: ', 'closing the incident.'];
  const resolved = await postHook('alerts', alert('resolved'), headers);
  const closed = await delivery(resolved.body.data.delivery_id);
  expect(closed.session_id).toBe(opened.session_id);
  expect(shown('Investigating the error rate.')!.thread_ts).toBeUndefined();
  expect(shown('Resolved: closing the incident.')!.thread_ts).toBe(opened.platform_message_id);
  const history = await request(`${base}/sessions/${opened.session_id}/messages`, { headers: { authorization: `Bearer ${admin.token}` } });
  expect(history.body.data.items[2].content).toBe('RESOLVED: HighErrorRate is over; close the incident with a short note.');
});

test('a tool confirmation of an event turn is asked with buttons in the delivery chat; a click lets the turn finish', async () => {
  provider.rounds = [{ calls: [{ id: 'n1', name: 'save_note', arguments: JSON.stringify({ text: 'deploy 31' }) }] }, { text: ['Noted ', 'the deploy.'] }];
  const body = githubPayload(31, 'success');
  const answer = await postHook('github', body, githubHeaders(body, randomUUID()));
  expect(answer.status).toBe(202);
  const question = await slack.waitFor((call) => call.method === 'chat.postMessage' && call.args.channel === CHANNEL && Array.isArray(call.args.blocks));
  const allow = question.args.blocks.flatMap((block: any) => block.elements ?? []).find((element: any) => element.action_id === 'switchboard_confirm_allow');
  const payload = {
    type: 'block_actions',
    team: { id: 'T1' },
    user: { id: 'U2', name: 'bob' },
    api_app_id: 'A1',
    trigger_id: 't1',
    container: { type: 'message', message_ts: '1', channel_id: CHANNEL },
    channel: { id: CHANNEL, name: 'deploys' },
    message: { ts: 'confirm-ts', text: question.args.text },
    actions: [{ type: 'button', action_id: allow.action_id, block_id: 'b', value: allow.value, action_ts: '1' }],
  };
  await new ChatWebhooks(SIGNING_SECRET, 'unused').slackClick(root, payload);
  const done = await delivery(answer.body.data.delivery_id);
  expect(tools.runs).toEqual([{ tool: 'save_note', input: { text: 'deploy 31' } }]);
  expect(shown('Noted the deploy.')!.ts).toBe(done.platform_message_id);
  expect(done.status).toBe('delivered');
});
