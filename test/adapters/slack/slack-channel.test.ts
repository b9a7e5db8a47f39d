import { createHmac, randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { startService, type RunningService } from '../../../src/main';
import { FAKE_SLACK, FakeSlackApi, type SlackApiCall } from '../../fakes/slack-api';
import { ScriptedProvider } from '../../fakes/scripted-provider';
import { TestTools } from '../../fakes/test-tools';
import { GENEROUS_RATE_LIMITS } from '../../helpers/auth-service';
import { testEnv } from '../../helpers/env';
import { jsonBody, request } from '../../helpers/http';
import { LogCapture } from '../../helpers/log-capture';
import { makeTempDir, removeTempDirs } from '../../helpers/temp-dir';
import { registerUser, type TestUser } from '../../helpers/users';
import { auditRows } from '../../helpers/audit';
import { parametersDigest } from '../../../src/audit/digest';

/** The Slack channel end to end: signed HTTP events in, the real bolt/web-api client out to a fake Slack. */
const SIGNING_SECRET = randomBytes(16).toString('hex');
const BOT_TOKEN = `xoxb-${randomBytes(8).toString('hex')}`;
const APOLOGY = 'Sorry, something went wrong while answering. Please try again in a moment.';

let slack: FakeSlackApi;
let service: RunningService;
let provider: ScriptedProvider;
let tools: TestTools;
let logs: LogCapture;
let admin: TestUser;
let base: string;
let eventCounter = 0;
let tsCounter = 0;

beforeAll(async () => {
  slack = new FakeSlackApi();
  await slack.start();
  provider = new ScriptedProvider();
  tools = new TestTools();
  logs = new LogCapture();
  const cwd = makeTempDir();
  // One Slack user (U9) has a daily budget of one token: their second turn is refused.
  writeFileSync(
    path.join(cwd, 'config.yaml'),
    "agent:\n  default_tools: [lookup, save_note]\nchannels:\n  slack:\n    edit_interval_ms: 200\n    send_budget:\n      per_channel: { limit: 20, window_ms: 1000 }\nusage:\n  budgets:\n    users: { 'slack:U9': 1 }\n",
  );
  service = await startService({
    env: testEnv(makeTempDir(), {
      ...GENEROUS_RATE_LIMITS,
      SERVICE_SLACK_BOT_TOKEN: BOT_TOKEN,
      SERVICE_SLACK_SIGNING_SECRET: SIGNING_SECRET,
      SERVICE_SLACK_API_URL: slack.url,
    }),
    cwd,
    logDestination: logs,
    provider,
    tools,
  });
  base = `http://127.0.0.1:${service.port}/api/v1`;
  admin = await registerUser(base, 'root');
});

afterAll(async () => {
  await service?.stop();
  await slack?.stop();
  removeTempDirs();
});

beforeEach(() => {
  provider.rounds = [];
  provider.pieces = ['Hello', ' there', ', friend', '.'];
  provider.failAt = null;
  provider.failWith = null;
  provider.pauseBefore = null;
  tools.runs.length = 0;
});

function sign(body: string, timestamp = Math.floor(Date.now() / 1000), secret = SIGNING_SECRET): Record<string, string> {
  const signature = `v0=${createHmac('sha256', secret).update(`v0:${timestamp}:${body}`).digest('hex')}`;
  return { 'x-slack-request-timestamp': String(timestamp), 'x-slack-signature': signature };
}

function nextTs(): string {
  tsCounter += 1;
  return `1710000000.${String(tsCounter).padStart(6, '0')}`;
}

/** An Events API envelope around a message event. */
function envelope(event: Record<string, unknown>, eventId = `Ev${++eventCounter}`) {
  return {
    token: 'legacy',
    team_id: FAKE_SLACK.teamId,
    api_app_id: 'A1',
    type: 'event_callback',
    event_id: eventId,
    event_time: Math.floor(Date.now() / 1000),
    event,
  };
}

const dm = (text: string, extra: Record<string, unknown> = {}) => ({
  type: 'message',
  channel_type: 'im',
  channel: 'D1',
  user: 'U1',
  text,
  ts: nextTs(),
  team: FAKE_SLACK.teamId,
  ...extra,
});
const mention = (channel: string, text: string, extra: Record<string, unknown> = {}) => ({
  type: 'app_mention',
  channel_type: 'channel',
  channel,
  user: 'U2',
  text: `<@${FAKE_SLACK.botUserId}> ${text}`,
  ts: nextTs(),
  team: FAKE_SLACK.teamId,
  ...extra,
});

async function postEvent(body: unknown, headers: Record<string, string> = {}, signing: Record<string, string> | null = null) {
  const text = JSON.stringify(body);
  return request(`${base}/channels/slack/events`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(signing ?? sign(text)), ...headers },
    body: text,
  });
}

async function clickButton(confirmation: SlackApiCall, action: string) {
  const button = confirmation.args.blocks
    .flatMap((block: any) => block.elements ?? [])
    .find((element: any) => element.action_id === `switchboard_confirm_${action}`);
  const payload = {
    type: 'block_actions',
    team: { id: FAKE_SLACK.teamId },
    user: { id: 'U2', name: 'bob' },
    api_app_id: 'A1',
    trigger_id: 't1',
    container: { type: 'message', message_ts: '1', channel_id: confirmation.args.channel },
    channel: { id: confirmation.args.channel, name: 'general' },
    message: { ts: 'confirm-message-ts', text: confirmation.args.text },
    actions: [{ type: 'button', action_id: button.action_id, block_id: 'b', value: button.value, action_ts: '1' }],
  };
  const body = new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
  return request(`${base}/channels/slack/interactions`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...sign(body) },
    body,
  });
}

/** The finished reply in `channel` that reads `text` (a stopped stream, or an edited message). */
async function finalReply(channel: string, text: string) {
  return slack.waitForReply(channel, text);
}

async function until(check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function sessionByKey(key: string): Promise<any> {
  const sessions = await request(`${base}/sessions`, { headers: { authorization: `Bearer ${admin.token}` } });
  return sessions.body.data.items.find((item: any) => item.session_key === key);
}

describe('receiving', () => {
  it('answers the url_verification challenge', async () => {
    const response = await postEvent({ type: 'url_verification', token: 'legacy', challenge: 'c-123' });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ challenge: 'c-123' });
  });

  it('refuses mis-signed and stale requests without starting a turn', async () => {
    const requests = provider.requests.length;
    const body = envelope(dm('forged'));
    const text = JSON.stringify(body);
    const forged = await postEvent(body, {}, sign(text, undefined, 'not-the-secret'));
    expect(forged.status).toBe(401);
    // The hub's error envelope (bolt alone answered an empty 401).
    expect(forged.body).toMatchObject({ data: null, error: { code: 'UNAUTHORIZED', details: {} }, meta: { request_id: forged.headers.get('x-request-id') } });
    const staleTimestamp = Math.floor(Date.now() / 1000) - 6 * 60;
    expect((await postEvent(body, {}, sign(text, staleTimestamp))).status).toBe(401);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(provider.requests.length).toBe(requests);
    expect(await sessionByKey(`slack::${FAKE_SLACK.teamId}:D1`)).toBeUndefined();
  });

  it('stores a DM before acknowledging, streams the reply by edits ending in the full text, and ignores a retry', async () => {
    slack.rateLimitOnce('chat.update', 1);
    provider.pieces = ['Hello', ' there', ', friend', '.'];
    const event = envelope(dm('hi bot'));
    const response = await postEvent(event);
    expect(response.status).toBe(200);
    // Acknowledged only after ingest: the session and the stored message exist already.
    const session = await sessionByKey(`slack::${FAKE_SLACK.teamId}:D1`);
    expect(session).toMatchObject({ channel: 'slack', name: 'slack: Ada' });

    const final = await finalReply('D1', 'Hello there, friend.');
    const placeholder = slack.callsOf('chat.postMessage').find((call) => call.args.channel === 'D1')!;
    expect(placeholder.args.thread_ts).toBeUndefined(); // a DM outside a thread is answered in the DM, by edits (Slack streams only in threads)
    expect(final.kind).toBe('post');
    expect(slack.callsOf('chat.startStream')).toHaveLength(0);
    expect(slack.calls.some((call) => call.method === 'chat.update (429)')).toBe(true); // waited out Retry-After, then retried
    expect(slack.callsOf('auth.test').length).toBeGreaterThan(0);
    expect(slack.calls.every((call) => call.token === BOT_TOKEN)).toBe(true);

    // Slack redelivers the same event (its ack was late): no second turn.
    const requests = provider.requests.length;
    const retry = await postEvent(event, { 'x-slack-retry-num': '1', 'x-slack-retry-reason': 'http_timeout' });
    expect(retry.status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(provider.requests.length).toBe(requests);
    const history = await request(`${base}/sessions/${session.id}/messages`, { headers: { authorization: `Bearer ${admin.token}` } });
    expect(history.body.data.items.filter((message: any) => message.role === 'user').map((m: any) => m.content)).toEqual(['hi bot']);
  });

  it('answers a channel mention in a thread under it, without the mention, and ignores bot posts and edits', async () => {
    const event = mention('C7', 'what is up');
    await postEvent(envelope(event));
    const reply = await finalReply('C7', 'Hello there, friend.');
    expect(reply).toMatchObject({ kind: 'stream', thread_ts: event.ts }); // streamed natively in the thread under the mention
    expect(await sessionByKey(`slack::${FAKE_SLACK.teamId}:C7:${event.ts}`)).toBeDefined();
    expect(provider.requests.at(-1)!.messages.at(-1)).toEqual({ role: 'user', content: 'what is up' });

    const requests = provider.requests.length;
    await postEvent(envelope({ ...dm('from a bot'), bot_id: 'B9' }));
    await postEvent(envelope({ ...dm('edited'), subtype: 'message_changed' }));
    await postEvent(envelope({ ...dm('my own post'), user: FAKE_SLACK.botUserId }));
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(provider.requests.length).toBe(requests);
  });

  it("queues a message sent while the thread's turn runs: an hourglass until its turn starts, then its own answer, in order", async () => {
    provider.pauseBefore = 1;
    const first = mention('C8', 'long question');
    await postEvent(envelope(first));
    await provider.paused();
    const second = mention('C8', 'and one more thing', { thread_ts: first.ts });
    expect((await postEvent(envelope(second))).status).toBe(200);
    await slack.waitFor((call) => call.method === 'reactions.add' && call.args.timestamp === second.ts);
    expect(slack.workspace.reactions.get(`C8:${second.ts}`)).toEqual(new Set(['hourglass_flowing_sand']));
    provider.pauseBefore = null;
    provider.release();
    await until(() => slack.workspace.messagesIn('C8').filter((message) => message.text === 'Hello there, friend.' && !message.streaming).length === 2);
    await slack.waitFor((call) => call.method === 'reactions.remove' && call.args.timestamp === second.ts);
    expect(slack.workspace.reactions.get(`C8:${second.ts}`)).toEqual(new Set());
    expect(
      provider.requests
        .at(-1)!
        .messages.filter((m) => m.role === 'user')
        .map((m) => m.content),
    ).toEqual(['long question', 'and one more thing']);
    expect(slack.calls.some((call) => call.method === 'chat.postMessage' && /Still answering/.test(call.args.text ?? ''))).toBe(false);
  });

  it('an edited DM that still waits is answered as edited; a deleted one is not answered', async () => {
    provider.pauseBefore = 1;
    await postEvent(envelope(dm('first thing', { channel: 'D5' })));
    await provider.paused();
    const typo = dm('secnd thing', { channel: 'D5' });
    const gone = dm('never mind this', { channel: 'D5' });
    await postEvent(envelope(typo));
    await postEvent(envelope(gone));
    await slack.waitFor((call) => call.method === 'reactions.add' && call.args.timestamp === gone.ts);
    await postEvent(
      envelope({
        type: 'message',
        subtype: 'message_changed',
        channel: 'D5',
        channel_type: 'im',
        ts: nextTs(),
        message: { ts: typo.ts, text: 'second thing', user: 'U1' },
      }),
    );
    await postEvent(envelope({ type: 'message', subtype: 'message_deleted', channel: 'D5', channel_type: 'im', ts: nextTs(), deleted_ts: gone.ts }));
    const requests = provider.requests.length;
    provider.pauseBefore = null;
    provider.release();
    await until(
      () =>
        provider.requests.length === requests + 1 && slack.workspace.messagesIn('D5').filter((message) => message.text === 'Hello there, friend.').length === 2,
    );
    expect(
      provider.requests
        .at(-1)!
        .messages.filter((m) => m.role === 'user')
        .map((m) => m.content),
    ).toEqual(['first thing', 'second thing']);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(provider.requests.length).toBe(requests + 1); // the deleted message never got a turn
  });

  it('shows internal errors only as an apology', async () => {
    provider.failAt = 1;
    provider.failWith = new Error('db password=hunter2 leaked in stack');
    await postEvent(envelope(mention('C9', 'break please')));
    await finalReply('C9', APOLOGY);
    expect(slack.calls.some((call) => JSON.stringify(call.args).includes('hunter2'))).toBe(false);
  });

  it('keeps the tokens and the signing secret out of the logs', () => {
    expect(logs.text).not.toContain(BOT_TOKEN);
    expect(logs.text).not.toContain(SIGNING_SECRET);
  });
});

describe('daily token budgets', () => {
  it('tell a Slack user over their budget so, in the thread, without calling the model', async () => {
    await postEvent(envelope(mention('CB1', 'hello', { user: 'U9' })));
    await finalReply('CB1', 'Hello there, friend.');
    const calls = provider.requests.length;
    await postEvent(envelope(mention('CB1', 'hello again', { user: 'U9' })));
    await finalReply('CB1', 'You have used your daily token budget (1 token; 15 spent today). It starts again at 00:00 UTC.');
    expect(provider.requests.length).toBe(calls);
    // Another user of the same workspace is still answered.
    await postEvent(envelope(mention('CB2', 'hello')));
    await finalReply('CB2', 'Hello there, friend.');
  });
});

describe('tool confirmations as buttons', () => {
  const call = (id: string, args: unknown) => ({ id, name: 'save_note', arguments: JSON.stringify(args) });

  /** Starts a turn that asks to run save_note in a new thread of `channel`, clicks `action`, answers the session. */
  async function confirmWith(channel: string, action: string) {
    provider.rounds = [{ calls: [call('n1', { text: 'remember this' })] }, { text: ['Noted.'] }];
    const event = mention(channel, 'save a note');
    await postEvent(envelope(event));
    const confirmation = await slack.waitFor((c) => c.method === 'chat.postMessage' && c.args.channel === channel && Array.isArray(c.args.blocks));
    expect(confirmation.args.thread_ts).toBe(event.ts);
    const buttons = confirmation.args.blocks.flatMap((block: any) => block.elements ?? []).map((element: any) => element.action_id);
    expect(buttons).toEqual(['allow', 'deny', 'allow_all', 'disable', 'forbid_all', 'cancel'].map((a) => `switchboard_confirm_${a}`));
    const clicked = await clickButton(confirmation, action);
    expect(clicked.status).toBe(200);
    // The button message now shows the choice instead of the buttons.
    const answered = await slack.waitFor((c) => c.method === 'chat.update' && c.args.ts === 'confirm-message-ts' && c.args.channel === channel);
    expect(answered.args.text).toBe(`save_note: ${action}`);
    const session = await sessionByKey(`slack::${FAKE_SLACK.teamId}:${channel}:${event.ts}`);
    // The audit trail names the Slack user who pressed the button, the action and a digest of the parameters.
    const [row] = await auditRows(base, admin.token, { kind: 'tool.confirmation', session_id: session.id });
    expect(row).toMatchObject({ actor: { key: 'slack:U2', kind: 'contact', name: 'bob' }, subject: 'save_note', action, session_id: session.id });
    expect(row!.details).toMatchObject({
      ...parametersDigest({ text: 'remember this' }),
      parameter_names: ['text'],
      waited_ms: expect.any(Number),
      requested_at: expect.any(String),
    });
    expect(JSON.stringify(row)).not.toContain('remember this');
    return { event, session };
  }

  const sessionTools = async (id: string) => (await request(`${base}/sessions/${id}/tools`, { headers: { authorization: `Bearer ${admin.token}` } })).body.data;

  it('allow runs the tool and the turn finishes', async () => {
    await confirmWith('CA1', 'allow');
    await finalReply('CA1', 'Noted.');
    expect(tools.runs).toEqual([{ tool: 'save_note', input: { text: 'remember this' } }]);
  });

  it('deny does not run it and the model is told', async () => {
    await confirmWith('CA2', 'deny');
    await finalReply('CA2', 'Noted.');
    expect(tools.runs).toEqual([]);
    expect(provider.requests.at(-1)!.messages.at(-1)!.content).toMatch(/denied/);
  });

  it('allow_all runs it and approves the tool for the session', async () => {
    const { session } = await confirmWith('CA3', 'allow_all');
    await finalReply('CA3', 'Noted.');
    expect(tools.runs).toHaveLength(1);
    expect((await sessionTools(session.id)).find((t: any) => t.name === 'save_note').auto_approved).toBe(true);
  });

  it('disable refuses it and disables the tool for the session', async () => {
    const { session } = await confirmWith('CA4', 'disable');
    await finalReply('CA4', 'Noted.');
    expect(tools.runs).toEqual([]);
    expect((await sessionTools(session.id)).find((t: any) => t.name === 'save_note').status).toBe('disabled');
  });

  it('forbid_all refuses this call and every later one of the turn', async () => {
    provider.rounds = [];
    await confirmWith('CA5', 'forbid_all');
    await finalReply('CA5', 'Noted.');
    expect(tools.runs).toEqual([]);
    expect(provider.requests.at(-1)!.messages.at(-1)!.content).toMatch(/blocked all further tool use/);
  });

  it('cancel ends the turn, and the reply says so', async () => {
    await confirmWith('CA6', 'cancel');
    await finalReply('CA6', 'The answer was cancelled.');
    expect(tools.runs).toEqual([]);
  });

  it('a click on an answered confirmation changes nothing', async () => {
    await confirmWith('CA7', 'allow');
    await finalReply('CA7', 'Noted.');
    const confirmation = slack.callsOf('chat.postMessage').find((c) => c.args.channel === 'CA7' && Array.isArray(c.args.blocks))!;
    expect((await clickButton(confirmation, 'deny')).status).toBe(200);
    await slack.waitFor((c) => c.method === 'chat.update' && c.args.channel === 'CA7' && c.args.text === 'This confirmation is no longer pending.');
    expect(tools.runs).toHaveLength(1);
  });
});

describe('routing', () => {
  it('a workflow bound to slack:C1 routes messages from C1, not from C2', async () => {
    const workflow = {
      name: 'c1-invoices',
      description: 'Invoices, C1 only',
      system_prompt: 'You are the C1 invoice desk.',
      tool_list: 'lookup',
      triggers: { keywords: ['invoice'] },
      binding_channels: ['slack:C1'],
    };
    const created = await request(`${base}/assistant/workflows`, jsonBody(workflow, { authorization: `Bearer ${admin.token}` }));
    expect(created.status).toBe(201);
    const systemPromptOf = (index: number) => provider.requests[index]!.messages.find((m) => m.role === 'system')?.content ?? '';

    await postEvent(envelope(mention('C1', 'an invoice question')));
    await finalReply('C1', 'Hello there, friend.');
    expect(systemPromptOf(provider.requests.length - 1)).toContain('You are the C1 invoice desk.');

    await postEvent(envelope(mention('C2', 'an invoice question')));
    await finalReply('C2', 'Hello there, friend.');
    expect(systemPromptOf(provider.requests.length - 1)).not.toContain('You are the C1 invoice desk.');
  });
});
