import { CHANNELS } from '../../adapters';
import { formatSessionKey, isKnownBinding, parseSessionKey, routingChannelOf } from '../../src/core/channel';
import { CONFIRM_ACTIONS } from '../../src/core/events';
import { jsonBody, request } from '../helpers/http';
import { removeTempDirs } from '../helpers/temp-dir';
import type { ChannelUnderTest } from './channels/channel-under-test';
import { startMattermost } from './channels/mattermost';
import { startSlack } from './channels/slack';
import { startTelegram } from './channels/telegram';
import { startWeb } from './channels/web';
import { startWebchat } from './channels/webchat';

/**
 * The channel-adapter contract: the same cases on every adapter of the registry, each through the
 * whole hub and its platform's real wire format (fake platform servers, real client libraries).
 * A channel added to adapters/index.ts gets a harness in ./channels and a line here.
 */
const HARNESSES: Record<string, { start: () => Promise<ChannelUnderTest>; redelivers: boolean }> = {
  slack: { start: startSlack, redelivers: true }, // Slack retries an event it thinks unacknowledged
  telegram: { start: startTelegram, redelivers: true }, // a webhook update comes again until answered 200
  web: { start: startWeb, redelivers: true }, // a client retries a POST (Idempotency-Key)
  webchat: { start: startWebchat, redelivers: false }, // a socket.io emit reaches the hub once or not at all
  mattermost: { start: startMattermost, redelivers: true }, // a post comes again: a replayed `posted` event, or the catch-up after a reconnect
};
const ANSWER = 'Hello there, friend.';

afterAll(() => removeTempDirs());

it('every channel of the registry is under contract', () => {
  expect(CHANNELS.map((channel) => channel.name).sort()).toEqual(Object.keys(HARNESSES).sort());
});

describe.each(Object.entries(HARNESSES))('the %s adapter', (name, { start, redelivers }) => {
  let channel: ChannelUnderTest;
  const admin = () => ({ authorization: `Bearer ${channel.adminToken}` });
  const history = async (sessionId: string) =>
    ((await request(`${channel.api}/sessions/${sessionId}/messages?limit=100`, { headers: admin() })).body.data.items as any[]).map(
      (message) => `${message.role}: ${message.content}`,
    );
  const session = async (sessionId: string) => (await request(`${channel.api}/sessions/${sessionId}`, { headers: admin() })).body.data;

  beforeAll(async () => {
    channel = await start();
  }, 30_000);

  afterAll(async () => {
    await channel?.stop();
  });

  beforeEach(() => {
    const { provider } = channel;
    provider.pieces = ['Hello', ' there', ', friend', '.'];
    provider.rounds = [];
    provider.pauseBefore = null;
    provider.failAt = null;
    provider.failWith = null;
    channel.tools.runs.length = 0;
  });

  it('keeps a conversation in one session under a key that round-trips, and routes it as its binding channel', async () => {
    const workflow = `bound-${name}`;
    const first = await channel.conversation();
    const created = await request(
      `${channel.api}/assistant/workflows`,
      jsonBody({ name: workflow, system_prompt: 'Contract.', triggers: { keywords: ['zebra'] }, binding_channels: [first.expectedBinding] }, admin()),
    );
    expect(created.status).toBe(201);
    await first.send('hello once');
    await first.showsAnswer(ANSWER);
    const sessionId = await first.sessionId();
    const record = await session(sessionId);
    expect(record).toMatchObject({ channel: name, session_key: first.expectedKey });
    if (first.expectedKey !== null) {
      const parsed = parseSessionKey(first.expectedKey)!;
      expect(parsed.channel).toBe(name);
      expect(formatSessionKey(parsed.channel, parsed.conversation)).toBe(first.expectedKey);
    }
    expect(routingChannelOf(record, CHANNELS)).toBe(first.expectedBinding);
    expect(isKnownBinding(first.expectedBinding, CHANNELS)).toBe(true);

    // The next message of the conversation lands in the same session, routed by the binding.
    await first.send('a zebra question');
    await first.showsAnswer(ANSWER);
    expect(await first.sessionId()).toBe(sessionId);
    expect((await session(sessionId)).active_workflow_id).toBe(created.body.data.id);
    expect(await history(sessionId)).toEqual([`user: hello once`, `assistant: ${ANSWER}`, `user: a zebra question`, `assistant: ${ANSWER}`]);

    // Another conversation is another session, which that narrow binding does not route.
    const second = await channel.conversation();
    await second.send('a zebra elsewhere');
    await second.showsAnswer(ANSWER);
    const other = await second.sessionId();
    expect(other).not.toBe(sessionId);
    if (second.expectedBinding !== first.expectedBinding) expect((await session(other)).active_workflow_id).toBeNull();
  });

  const ifRedelivers = redelivers ? it : it.skip;
  ifRedelivers('takes a redelivered message in once: one stored message, one turn, one answer', async () => {
    const conversation = await channel.conversation();
    const requests = channel.provider.requests.length;
    const delivery = await conversation.send('only once');
    await conversation.showsAnswer(ANSWER);
    const answers = () => conversation.shown().filter((text) => text === ANSWER).length;
    const shownOnce = answers();
    await delivery!.redeliver();
    await delivery!.redeliver();
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(await history(await conversation.sessionId())).toEqual(['user: only once', `assistant: ${ANSWER}`]);
    expect(channel.provider.requests.length).toBe(requests + 1);
    expect(answers()).toBe(shownOnce);
  });

  it('renders a turn from start to end: under way while it streams, then the whole answer, stored', async () => {
    const conversation = await channel.conversation();
    channel.provider.pauseBefore = 2;
    await conversation.send('stream to me');
    await channel.provider.paused();
    await conversation.showsWorking('Hello there');
    channel.provider.pauseBefore = null;
    channel.provider.release();
    await conversation.showsAnswer(ANSWER);
    expect(await history(await conversation.sessionId())).toEqual(['user: stream to me', `assistant: ${ANSWER}`]);
  });

  it('asks for a confirmation and, answered `allow`, runs the tool once and answers', async () => {
    const conversation = await channel.conversation();
    channel.provider.rounds = [
      { calls: [{ id: `call-${name}`, name: 'save_note', arguments: JSON.stringify({ text: `note via ${name}` }) }] },
      { text: ['Saved', ' it.'] },
    ];
    await conversation.send('save a note please');
    const asked = await conversation.confirmation();
    if (asked.offered !== null) expect(asked.offered).toEqual([...CONFIRM_ACTIONS]);
    expect(channel.tools.runs).toEqual([]);
    await asked.answer('allow');
    await conversation.showsAnswer('Saved it.');
    expect(channel.tools.runs).toEqual([{ tool: 'save_note', input: { text: `note via ${name}` } }]);
  });

  it('shows an internal error as a short apology, never its details', async () => {
    const conversation = await channel.conversation();
    channel.provider.pieces = ['Partial', ' never'];
    channel.provider.failAt = 1;
    channel.provider.failWith = new Error('database password hunter2 at /srv/internal/secret.ts:42');
    await conversation.send('break please');
    const apology = await conversation.failureShown();
    expect(apology.length).toBeGreaterThan(0);
    expect(apology.length).toBeLessThanOrEqual(120);
    expect(conversation.shown().filter((text) => /hunter2|secret\.ts|Error:/.test(text))).toEqual([]);
  });
});
