import { randomUUID } from 'node:crypto';
import { followTurn, type TurnOutcome } from '../../src/core/follow-turn';
import type { Hub } from '../../src/core/hub';
import type { InboundMessage } from '../../src/core/inbound';
import type { ChatMessage } from '../../src/agent/provider';
import { ScriptedProvider } from '../fakes/scripted-provider';
import { TestTools } from '../fakes/test-tools';
import { startTestHub, type TestHub } from '../helpers/hub';
import { jsonBody, request } from '../helpers/http';
import { removeTempDirs } from '../helpers/temp-dir';
import { registerUser } from '../helpers/users';

/**
 * The mid-turn policy of chat channels, through the real hub (SQLite, in-process queue and registry):
 * a message sent while its conversation's turn runs waits (queue), steers, joins the next turn
 * (collect), or is refused (reject), as the channel's default or the workflow says. The same rules
 * across processes are covered by test/pipeline/mid-turn-multi-process.test.ts.
 */
let hub: TestHub;
let port: Hub;
let token: string;
const provider = new ScriptedProvider();

beforeAll(async () => {
  hub = await startTestHub({ provider, tools: new TestTools() });
  port = hub.service.hub!;
  token = (await registerUser(hub.api, 'root')).token;
  for (const policy of ['reject', 'steer', 'collect']) {
    const created = await request(
      `${hub.api}/assistant/workflows`,
      jsonBody(
        { name: `w-${policy}`, system_prompt: `policy ${policy}`, tool_list: 'save_note, lookup', mid_turn: policy },
        { authorization: `Bearer ${token}` },
      ),
    );
    expect(created.status).toBe(201);
  }
});

afterAll(async () => {
  await hub.stop();
  removeTempDirs();
});

beforeEach(() => {
  provider.pauseBefore = null;
  provider.rounds = [];
  provider.requests = [];
});

/** A Telegram message in chat `chat` (the hub port, as the Telegram adapter calls it). */
function say(chat: string, text: string, extra: Partial<InboundMessage> = {}) {
  return port.ingest({
    channel: 'telegram',
    sessionKey: `telegram::${chat}`,
    sender: { userId: 'channel:telegram', contactId: '77', displayName: 'Ada' },
    text,
    mode: 'normal',
    metadata: {},
    externalId: `${chat}:${randomUUID()}`,
    ...extra,
  });
}

async function outcomeOf(sessionId: string, turnId: string): Promise<TurnOutcome> {
  return (await followTurn(port.events, sessionId, turnId, { replay: true })).outcome;
}

/** The user and assistant texts a model request carried, in order (system prompt left out). */
function conversation(messages: ChatMessage[]): string[] {
  return messages.filter((message) => message.role === 'user' || message.role === 'assistant').map((message) => `${message.role}: ${message.content}`);
}

async function history(
  sessionId: string,
): Promise<{ role: string; content: string; turn_id: string | null; reply_to: string | null; status: string | null }[]> {
  const page = await request(`${hub.api}/sessions/${sessionId}/messages?limit=100`, { headers: { authorization: `Bearer ${token}` } });
  return page.body.data.items.map((item: any) => ({
    role: item.role,
    content: item.content,
    turn_id: item.turn_id,
    reply_to: item.reply_to,
    status: item.status,
  }));
}

/** What a client needs to show a queued conversation (issue 33): each question's turn and whether it waits, each reply's question. */
async function turnsShown(sessionId: string, names: Record<string, string>): Promise<string[]> {
  const name = (id: string | null) => (id === null ? '-' : (names[id] ?? id));
  return (await history(sessionId)).map((row) =>
    row.role === 'user' ? `${row.content} [turn ${name(row.turn_id)}, ${row.status}]` : `${row.role} replies to ${name(row.reply_to)} [${row.status}]`,
  );
}

/** Holds the next turn at its second token until `release`. */
async function holdFirstTurn(chat: string, text: string, extra: Partial<InboundMessage> = {}) {
  provider.pauseBefore = 1;
  const first = await say(chat, text, extra);
  await provider.paused();
  return first;
}

function release() {
  provider.pauseBefore = null;
  provider.release();
}

it('queue (the chat default): messages sent during a turn are stored, acknowledged and answered next, one turn each, in order', async () => {
  const first = await holdFirstTurn('q1', 'first question');
  expect(first.disposition).toBe('started');
  const second = await say('q1', 'second question');
  const third = await say('q1', 'third question');
  expect([second.disposition, third.disposition]).toEqual(['queued', 'queued']);
  expect(second.sessionId).toBe(first.sessionId);
  // Stored at once (nothing accepted is lost), before any of them is answered.
  expect((await history(first.sessionId)).map((row) => row.content)).toEqual(['first question', 'second question', 'third question']);
  const names = { [first.userMessageId]: 'first', [second.userMessageId]: 'second', [third.userMessageId]: 'third' };
  // The history says which wait (the running one and the two queued behind it).
  expect(await turnsShown(first.sessionId, names)).toEqual([
    'first question [turn first, waiting]',
    'second question [turn second, waiting]',
    'third question [turn third, waiting]',
  ]);

  const outcomes = [
    outcomeOf(first.sessionId, first.userMessageId),
    outcomeOf(first.sessionId, second.userMessageId),
    outcomeOf(first.sessionId, third.userMessageId),
  ];
  release();
  const ended = await Promise.all(outcomes);
  expect(ended.map((outcome) => outcome.kind)).toEqual(['done', 'done', 'done']);
  // The first reply is stored after the questions that queued meanwhile; `reply_to` says whose it is.
  expect(await turnsShown(first.sessionId, names)).toEqual([
    'first question [turn first, answered]',
    'second question [turn second, answered]',
    'third question [turn third, answered]',
    'assistant replies to first [null]',
    'assistant replies to second [null]',
    'assistant replies to third [null]',
  ]);
  expect(provider.requests).toHaveLength(3);
  // Each turn sees the answered turns before it, and never a message still waiting behind it.
  expect(conversation(provider.requests[1]!.messages)).toEqual(['user: first question', 'assistant: Hello there, friend.', 'user: second question']);
  expect(conversation(provider.requests[2]!.messages)).toEqual([
    'user: first question',
    'assistant: Hello there, friend.',
    'user: second question',
    'assistant: Hello there, friend.',
    'user: third question',
  ]);
  // The done frames came in the order the messages were sent.
  const frames = (await port.events.replay(first.sessionId, -1)).frames.filter((frame) => frame.type === 'done');
  expect(frames.map((frame) => (frame.payload as { turn_id?: string }).turn_id)).toEqual([first.userMessageId, second.userMessageId, third.userMessageId]);
  // Nothing waits any more: the next message starts at once.
  expect((await say('q1', 'later')).disposition).toBe('started');
  await outcomeOf(first.sessionId, (await port.findSession(first.sessionId))!.turnId ?? first.userMessageId);
});

it('reject (a workflow that says so): a message sent during a turn is refused with TURN_IN_PROGRESS and not stored', async () => {
  const first = await holdFirstTurn('r1', 'start', { metadata: { workflow: 'w-reject' } });
  await expect(say('r1', 'too soon')).rejects.toMatchObject({ code: 'TURN_IN_PROGRESS' });
  const done = outcomeOf(first.sessionId, first.userMessageId);
  release();
  expect((await done).kind).toBe('done');
  expect((await history(first.sessionId)).map((row) => row.content)).toEqual(['start', 'Hello there, friend.']);
});

it('collect: messages sent during a turn are answered together by the next turn; the ones merged end as merged', async () => {
  const first = await holdFirstTurn('c1', 'start', { metadata: { workflow: 'w-collect' } });
  const second = await say('c1', 'also this');
  const third = await say('c1', 'and this');
  expect([second.disposition, third.disposition]).toEqual(['queued', 'queued']);
  const outcomes = [
    outcomeOf(first.sessionId, first.userMessageId),
    outcomeOf(first.sessionId, second.userMessageId),
    outcomeOf(first.sessionId, third.userMessageId),
  ];
  release();
  const [one, two, three] = await Promise.all(outcomes);
  expect(one!.kind).toBe('done');
  expect(two!.kind).toBe('done');
  expect(three).toEqual({ kind: 'merged', into: second.userMessageId });
  // Two model calls: the first turn, then one for both waiting messages.
  expect(provider.requests).toHaveLength(2);
  expect(conversation(provider.requests[1]!.messages)).toEqual(['user: start', 'assistant: Hello there, friend.', 'user: also this', 'user: and this']);
  expect((await history(first.sessionId)).map((row) => `${row.role}: ${row.content}`)).toEqual([
    'user: start',
    'user: also this',
    'user: and this',
    'assistant: Hello there, friend.',
    'assistant: Hello there, friend.',
  ]);
  // The merged message is filed under the turn that answered it.
  expect(await turnsShown(first.sessionId, { [first.userMessageId]: 'first', [second.userMessageId]: 'second', [third.userMessageId]: 'third' })).toEqual([
    'start [turn first, answered]',
    'also this [turn second, answered]',
    'and this [turn second, answered]',
    'assistant replies to first [null]',
    'assistant replies to second [null]',
  ]);
  // Both are answered: the next message starts at once and its prompt groups each reply with its messages.
  const later = await say('c1', 'next');
  expect(later.disposition).toBe('started');
  expect((await outcomeOf(first.sessionId, later.userMessageId)).kind).toBe('done');
  expect(conversation(provider.requests[2]!.messages)).toEqual([
    'user: start',
    'assistant: Hello there, friend.',
    'user: also this',
    'user: and this',
    'assistant: Hello there, friend.',
    'user: next',
  ]);
});

it('steer: the running turn ends at its next tool boundary (a pending confirmation counts as denied), keeps what it said, and the new message runs next', async () => {
  provider.rounds = [{ text: ['Let me save that. '], calls: [{ id: 'call-1', name: 'save_note', arguments: '{"text":"x"}' }] }];
  const first = await say('s1', 'save a note', { metadata: { workflow: 'w-steer' } });
  // The turn waits for the user to confirm save_note.
  const confirmRequested = new Promise<void>((resolve) => {
    void port.events.subscribe(first.sessionId, (frame) => frame.type === 'tool_confirm_request' && resolve());
  });
  const kept = await port.events.replay(first.sessionId, -1);
  if (!kept.frames.some((frame) => frame.type === 'tool_confirm_request')) await confirmRequested;
  const firstOutcome = outcomeOf(first.sessionId, first.userMessageId);
  const second = await say('s1', 'never mind, what is 2+2?');
  expect(second.disposition).toBe('queued');
  const [one, two] = await Promise.all([firstOutcome, outcomeOf(first.sessionId, second.userMessageId)]);
  expect(one).toMatchObject({ kind: 'done', done: { text: 'Let me save that. ' } });
  expect(two.kind).toBe('done');
  const frames = (await port.events.replay(first.sessionId, -1)).frames;
  expect(frames.find((frame) => frame.type === 'tool_end')?.payload).toMatchObject({ tool_name: 'save_note', error: expect.stringContaining('denied') });
  // The second turn's model saw what the first said and the denied tool round, then the new message.
  const last = provider.requests.at(-1)!.messages;
  expect(conversation(last).at(-1)).toBe('user: never mind, what is 2+2?');
  expect(last.some((message) => message.role === 'tool' && message.name === 'save_note')).toBe(true);
});

it('an edited message that still waits replaces its text; a deleted one is dropped; a running one cannot be changed', async () => {
  const first = await holdFirstTurn('e1', 'running now', { externalId: 'e1:m1' });
  await say('e1', 'typo here', { externalId: 'e1:m2' });
  const deleted = await say('e1', 'delete me', { externalId: 'e1:m3' });
  const deletedOutcome = outcomeOf(first.sessionId, deleted.userMessageId);
  expect(await port.amendWaiting('telegram', 'e1:m2', 'fixed text')).toBe(true);
  expect(await port.amendWaiting('telegram', 'e1:m3', null)).toBe(true);
  // Whoever follows the deleted message learns that its turn never comes.
  expect(await deletedOutcome).toEqual({ kind: 'dropped' });
  expect(await port.amendWaiting('telegram', 'e1:m1', 'too late')).toBe(false);
  expect(await port.amendWaiting('telegram', 'e1:unknown', 'who?')).toBe(false);
  const done = outcomeOf(first.sessionId, first.userMessageId);
  release();
  expect((await done).kind).toBe('done');
  await waitFor(async () => (await history(first.sessionId)).length === 4);
  expect((await history(first.sessionId)).map((row) => `${row.role}: ${row.content}`)).toEqual([
    'user: running now',
    'user: fixed text',
    'assistant: Hello there, friend.',
    'assistant: Hello there, friend.',
  ]);
  expect(conversation(provider.requests.at(-1)!.messages).at(-1)).toBe('user: fixed text');
  // Answered: too late to change now.
  expect(await port.amendWaiting('telegram', 'e1:m2', 'again')).toBe(false);
});

it('the web channel keeps TURN_IN_PROGRESS whatever the workflow says', async () => {
  const { token: user, sessionId, socket } = await hub.sessionSocket('webby');
  provider.pauseBefore = 1;
  const headers = { authorization: `Bearer ${user}` };
  const first = await request(`${hub.api}/sessions/${sessionId}/messages`, jsonBody({ text: 'hi', metadata: { workflow: 'w-collect' } }, headers));
  expect(first.status).toBe(202);
  await provider.paused();
  const second = await request(`${hub.api}/sessions/${sessionId}/messages`, jsonBody({ text: 'again' }, headers));
  expect(second.status).toBe(409);
  expect(second.body.error.code).toBe('TURN_IN_PROGRESS');
  release();
  await socket.nextOfType('done');
  socket.close();
});

async function waitFor(check: () => Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
