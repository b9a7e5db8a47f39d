import { removeTempDirs } from '../../helpers/temp-dir';
import { createWorkflow, startWebchatHarness, Widgets, type WebchatHarness, type WidgetOptions } from './webchat-harness';

/**
 * The website widget against a running hub, speaking exactly what rasa-webchat speaks: a
 * conversation routed to a workflow bound to `webchat`, a reload that keeps the session, and a
 * second visitor who never reaches the first one's session.
 */
let harness: WebchatHarness;
const widgets = new Widgets(() => harness.base);
const widget = (options?: WidgetOptions) => widgets.open(options);

beforeAll(async () => {
  // The `coupons` workflow may spend one token a day, all its visitors together.
  harness = await startWebchatHarness({}, {}, { usage: { budgets: { workflows: { coupons: 1 } } } });
  await createWorkflow(harness, { name: 'coupons', tool_list: 'lookup', triggers: { keywords: ['coupon'] }, binding_channels: ['webchat'] });
  await createWorkflow(harness, {
    name: 'refunds',
    system_prompt: 'You handle refunds for the shop.',
    tool_list: 'lookup',
    triggers: { keywords: ['refund'] },
    binding_channels: ['webchat'],
  });
  // The same keyword on another channel's workflow must not answer a widget visitor.
  await createWorkflow(harness, {
    name: 'internal-refunds',
    system_prompt: 'You are the internal refunds desk.',
    tool_list: 'lookup',
    triggers: { keywords: ['refund', 'desk'] },
    binding_channels: ['web'],
  });
});

afterEach(() => {
  widgets.closeAll();
  harness.provider.pieces = ['Hello', ' there', ', friend', '.'];
});

afterAll(async () => {
  await harness?.stop();
  removeTempDirs();
});

const sessions = async () =>
  (await harness.admin('GET', '/sessions?limit=100')).body.data.items.filter((session: { channel: string }) => session.channel === 'webchat');

it('routes a visitor through the workflow bound to webchat and answers one message per paragraph, typing meanwhile', async () => {
  harness.provider.pieces = ['Refunds take', ' five days.\n\n', 'Send the order', ' number and I will check.'];
  const visitor = await widget({ customData: { tags: ['vip'], language: 'en' } });
  expect(visitor.sessionId).toMatch(/^[0-9a-f]{64}$/);
  visitor.say('I would like a refund, desk');
  expect(await visitor.texts(2)).toEqual(['Refunds take five days.', 'Send the order number and I will check.']);
  await visitor.until(() => visitor.typing.at(-1) === false);
  expect(visitor.typing).toEqual([true, false]);

  const request = harness.provider.requests.at(-1)!;
  expect(request.messages[0]).toMatchObject({ role: 'system', content: expect.stringContaining('You handle refunds for the shop.') });
  const [session] = await sessions();
  expect(session.session_key).toBe(`webchat::${visitor.sessionId!.slice(0, 32)}`);
  const workflow = (await harness.admin('GET', '/assistant/workflows/refunds')).body.data;
  expect(session.active_workflow_id).toBe(workflow.id);
  // The contact carries the tags the page's customData gave it.
  const contacts = (await harness.admin('GET', '/assistant/contacts')).body.data.items;
  expect(contacts.find((contact: { session_key: string }) => contact.session_key === session.session_key)).toMatchObject({ tags: ['vip', 'language:en'] });
});

it('keeps the session across a reload: the widget sends its id again and the conversation goes on', async () => {
  const first = await widget();
  first.say('My name is Ann.');
  await first.next();
  const kept = first.sessionId!;
  first.close();

  const reloaded = await widget({ sessionId: kept });
  expect(reloaded.sessionId).toBe(kept);
  reloaded.say('What is my name?');
  await reloaded.next();
  const conversation = harness.provider.requests.at(-1)!.messages.map((message) => message.content);
  expect(conversation).toEqual(expect.arrayContaining(['My name is Ann.', 'What is my name?']));
  expect((await sessions()).filter((session: { session_key: string }) => session.session_key === `webchat::${kept.slice(0, 32)}`)).toHaveLength(1);
});

it('keeps a second visitor apart: own session, own answers, and no way into the first one', async () => {
  const ann = await widget();
  const bob = await widget();
  expect(bob.sessionId).not.toBe(ann.sessionId);

  harness.provider.pieces = ['Answer for Bob.'];
  bob.say('Bob here, secret 42.');
  expect((await bob.next()).text).toBe('Answer for Bob.');
  const bobsRequest = harness.provider.requests.at(-1)!.messages.map((message) => message.content);

  // A message claiming Ann's session on Bob's socket still goes to Bob's own session.
  harness.provider.pieces = ['Still Bob.'];
  bob.say('Let me into Ann’s chat.', ann.sessionId);
  expect((await bob.next()).text).toBe('Still Bob.');
  expect(harness.provider.requests.at(-1)!.messages.map((message) => message.content)).toEqual(
    expect.arrayContaining([...bobsRequest.filter((text) => text !== undefined)]),
  );

  // Ann sees only her own answer: had Bob's reached her socket, it would have come first.
  harness.provider.pieces = ['Answer for Ann.'];
  ann.say('Ann here.');
  expect((await ann.next()).text).toBe('Answer for Ann.');
  expect(ann.messages.map((message) => message.text)).toEqual(['Answer for Ann.']);
  expect(harness.provider.requests.at(-1)!.messages.map((message) => message.content)).not.toContain('Bob here, secret 42.');

  // A forged id — Ann's conversation with another signature, or one the client made up — gets a new session.
  const forged = `${ann.sessionId!.slice(0, 32)}${'0'.repeat(32)}`;
  for (const claimed of [forged, 'a'.repeat(64), 'ann', 42]) {
    const mallory = await widget({ sessionId: claimed as string });
    expect(mallory.sessionId).toMatch(/^[0-9a-f]{64}$/);
    expect(mallory.sessionId).not.toBe(ann.sessionId);
    expect(mallory.sessionId!.slice(0, 32)).not.toBe(ann.sessionId!.slice(0, 32));
  }
});

it('answers a message sent while the turn runs after it, in order (mid-turn policy queue)', async () => {
  harness.provider.pauseBefore = 1;
  harness.provider.pieces = ['One', ' done.'];
  const visitor = await widget();
  visitor.say('first');
  await harness.provider.paused();
  visitor.say('second');
  harness.provider.pauseBefore = null;
  harness.provider.release();
  expect(await visitor.texts(2)).toEqual(['One done.', 'One done.']);
  expect(harness.provider.requests.slice(-2).map((request) => request.messages.at(-1)!.content)).toEqual(['first', 'second']);
});

it('keeps an answer for a visitor who left mid-answer and gives it to the widget when it comes back', async () => {
  harness.provider.pauseBefore = 1;
  harness.provider.pieces = ['Kept for', ' later.'];
  const leaving = await widget();
  leaving.say('Tell me later.');
  await harness.provider.paused();
  const kept = leaving.sessionId!;
  leaving.close();
  await harness.logs.until((entry) => entry.msg === 'webchat: a widget disconnected' && entry.conversation === kept.slice(0, 32));
  harness.provider.pauseBefore = null;
  harness.provider.release();
  // The turn ends with nobody in the room; the next page load asks for the session again.
  const back = await widget({ sessionId: kept });
  expect((await back.next()).text).toBe('Kept for later.');
});

it('answers a turn that fails with a short apology, never the error', async () => {
  harness.provider.failAt = 0;
  const visitor = await widget();
  visitor.say('break please');
  const answer = await visitor.next();
  harness.provider.failAt = null;
  expect(answer.text).toBe('Sorry, something went wrong while answering. Please try again.');
  expect(JSON.stringify(visitor.messages)).not.toContain('exploded');
});

it('tells a visitor when a workflow is over its daily token budget, without calling the model', async () => {
  const visitor = await widget();
  visitor.say('a coupon please');
  expect((await visitor.next()).text).toBe('Hello there, friend.');
  const calls = harness.provider.requests.length;
  visitor.say('another coupon');
  expect((await visitor.next()).text).toMatch(/^The workflow "coupons" has used its daily token budget/);
  expect(harness.provider.requests.length).toBe(calls);
});

it('gives a visitor whose session an admin archived a new session, confirmed to the widget', async () => {
  harness.provider.pieces = ['Hi.'];
  const visitor = await widget();
  visitor.say('hello');
  await visitor.next();
  const closed = visitor.sessionId!;
  const [session] = (await sessions()).filter((each: { session_key: string }) => each.session_key === `webchat::${closed.slice(0, 32)}`);
  expect((await harness.admin('DELETE', `/sessions/${session.id}`)).status).toBeLessThan(300);
  visitor.say('are you there?');
  expect((await visitor.next()).text).toBe('This conversation was closed. Please send your message again to start a new one.');
  expect(visitor.sessionId).not.toBe(closed);
  visitor.say('are you there?');
  expect((await visitor.next()).text).toBe('Hi.');
});
