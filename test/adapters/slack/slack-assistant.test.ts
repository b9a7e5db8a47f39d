import { createHmac, randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { webApi } from '@slack/bolt';
import { startService, type RunningService } from '../../../src/main';
import { FAKE_SLACK, FakeSlackApi } from '../../fakes/slack-api';
import { ScriptedProvider } from '../../fakes/scripted-provider';
import { GENEROUS_RATE_LIMITS } from '../../helpers/auth-service';
import { testEnv } from '../../helpers/env';
import { request } from '../../helpers/http';
import { LogCapture } from '../../helpers/log-capture';
import { makeTempDir, removeTempDirs } from '../../helpers/temp-dir';

/**
 * The Slack channel end to end as an AI app: suggested prompts when an assistant thread opens, the
 * thread status while a turn runs, streamed replies — and a burst of 50 turns in one channel that
 * stays inside a per-channel limit the fake Slack enforces (scaled down: 10 sends per 400 ms; the
 * hub's budget here is 8 per 800 ms), without a single 429. The fake counts calls when it reads
 * them: on a loaded machine two of the hub's windows can arrive closer than they were sent (CI run
 * 4 of 2026-11-28: one 429 with a budget of 8 per 500 ms), so the budget's window is twice the fake's.
 */
const SIGNING_SECRET = randomBytes(16).toString('hex');
const BOT_TOKEN = `xoxb-${randomBytes(8).toString('hex')}`;
const REPLY = 'Hello there, friend.';

let slack: FakeSlackApi;
let service: RunningService;
let provider: ScriptedProvider;
let base: string;
let counter = 0;

beforeAll(async () => {
  slack = new FakeSlackApi();
  await slack.start();
  provider = new ScriptedProvider();
  const cwd = makeTempDir();
  writeFileSync(
    path.join(cwd, 'config.yaml'),
    [
      'channels:',
      '  slack:',
      '    edit_interval_ms: 200',
      '    send_budget:',
      '      per_channel: { limit: 8, window_ms: 800 }',
      '      overall: { limit: 1000, window_ms: 1000 }',
      '',
    ].join('\n'),
  );
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
  });
  base = `http://127.0.0.1:${service.port}/api/v1`;
});

afterAll(async () => {
  await service?.stop();
  await slack?.stop();
  removeTempDirs();
});

const nextTs = () => `1720000000.${String(++counter).padStart(6, '0')}`;

async function postEvent(event: Record<string, unknown>) {
  const body = JSON.stringify({
    token: 'legacy',
    team_id: FAKE_SLACK.teamId,
    api_app_id: 'A1',
    type: 'event_callback',
    event_id: `Ev-a${++counter}`,
    event_time: Math.floor(Date.now() / 1000),
    event,
  });
  const timestamp = Math.floor(Date.now() / 1000);
  const signature = `v0=${createHmac('sha256', SIGNING_SECRET).update(`v0:${timestamp}:${body}`).digest('hex')}`;
  const response = await request(`${base}/channels/slack/events`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-slack-request-timestamp': String(timestamp), 'x-slack-signature': signature },
    body,
  });
  expect(response.status).toBe(200);
}

it('offers the suggested prompts when someone opens an assistant thread', async () => {
  const threadTs = nextTs();
  await postEvent({
    type: 'assistant_thread_started',
    assistant_thread: { user_id: 'U1', channel_id: 'D-AI', thread_ts: threadTs, context: { channel_id: 'C1', team_id: FAKE_SLACK.teamId } },
    event_ts: threadTs,
  });
  await slack.waitFor((call) => call.method === 'assistant.threads.setSuggestedPrompts');
  expect(slack.workspace.prompts.get(`D-AI:${threadTs}`)).toEqual({
    title: 'Try asking',
    prompts: [
      { title: 'What can you do?', message: '/help' },
      { title: 'Which tools can you use?', message: '/tools' },
      { title: 'How is this session set up?', message: '/info' },
    ],
  });
});

it('answers in the assistant thread: "is thinking…" while the turn runs, the reply streamed, the status cleared', async () => {
  provider.pauseBefore = 1;
  const threadTs = nextTs();
  await postEvent({ type: 'message', channel_type: 'im', channel: 'D-AI', user: 'U1', text: 'hi', ts: nextTs(), thread_ts: threadTs, team: FAKE_SLACK.teamId });
  await provider.paused();
  await slack.waitFor((call) => call.method === 'assistant.threads.setStatus' && call.args.thread_ts === threadTs);
  expect(slack.workspace.statusesOf('D-AI', threadTs)).toEqual(['is thinking…']);
  provider.release();
  provider.pauseBefore = null;
  const reply = await slack.waitForReply('D-AI', REPLY);
  expect(reply).toMatchObject({ kind: 'stream', thread_ts: threadTs });
  await slack.waitFor((call) => call.method === 'assistant.threads.setStatus' && call.args.thread_ts === threadTs && call.args.status === '');
  expect(slack.workspace.statusesOf('D-AI', threadTs).at(-1)).toBe('');
});

it('a burst of 50 concurrent turns in one channel: every reply lands whole, and Slack never answers 429', async () => {
  slack.rateLimit = { limit: 10, windowMs: 400, retryAfterS: 1 };
  try {
    const mentions = Array.from({ length: 50 }, (_, index) => ({
      type: 'app_mention',
      channel_type: 'channel',
      channel: 'C-BURST',
      user: `U${index}`,
      text: `<@${FAKE_SLACK.botUserId}> question ${index}`,
      ts: nextTs(),
      team: FAKE_SLACK.teamId,
    }));
    await Promise.all(mentions.map((event) => postEvent(event)));
    const deadline = Date.now() + 45_000;
    const finished = () =>
      mentions.filter((event) =>
        slack.workspace.messagesIn('C-BURST').some((message) => message.thread_ts === event.ts && !message.streaming && message.text === REPLY),
      );
    while (finished().length < mentions.length && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(finished()).toHaveLength(50);
    expect(slack.rateLimitedCount).toBe(0);
    expect(slack.calls.filter((call) => call.method.endsWith('(429)'))).toEqual([]);

    // The fake's limit is real: eleven quick posts past the hub's budget are answered 429.
    const raw = new webApi.WebClient(BOT_TOKEN, { slackApiUrl: slack.url, rejectRateLimitedCalls: true, retryConfig: { retries: 0 } });
    const results = await Promise.allSettled(Array.from({ length: 11 }, () => raw.chat.postMessage({ channel: 'C-RAW', text: 'x' })));
    expect(results.filter((result) => result.status === 'rejected')).toHaveLength(1);
    expect(slack.rateLimitedCount).toBe(1);
  } finally {
    slack.rateLimit = null;
  }
});
