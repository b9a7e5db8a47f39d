import { io } from 'socket.io-client';
import { request } from '../../helpers/http';
import { removeTempDirs } from '../../helpers/temp-dir';
import { SESSION_SECRET, startWebchatHarness, Widget, Widgets, type WebchatHarness, type WidgetOptions } from './webchat-harness';

/**
 * An anonymous public endpoint: every limit answers the visitor with a clear message (and takes
 * nothing in), and only the configured sites' pages may connect.
 */
const SHOP = 'https://shop.example.com';
let harness: WebchatHarness;
/** The session of the first test: counted for this address already. */
let counted: string;
const widgets = new Widgets(() => harness.base);
const widget = (options?: WidgetOptions) => widgets.open(options);

beforeAll(async () => {
  harness = await startWebchatHarness({
    allowed_origins: [SHOP],
    new_sessions_per_ip_per_hour: 2,
    messages_per_session_per_minute: 3,
    max_message_chars: 40,
  });
  harness.provider.pieces = ['Fine.'];
});

afterEach(() => {
  widgets.closeAll();
});

afterAll(async () => {
  await harness?.stop();
  removeTempDirs();
});

it('refuses a message over max_message_chars with the limit in the answer, and takes nothing in', async () => {
  const visitor = await widget();
  const asked = harness.provider.requests.length;
  visitor.say('x'.repeat(41));
  expect((await visitor.next()).text).toBe('Your message is too long (41 characters; this chat takes at most 40). Please shorten it and send it again.');
  // Characters, not UTF-16 units: 40 emoji fit.
  visitor.say('🙂'.repeat(40));
  expect((await visitor.next()).text).toBe('Fine.');
  counted = visitor.sessionId!;
  expect(harness.provider.requests.length).toBe(asked + 1);
});

it('refuses the messages of a session past messages_per_session_per_minute, without taking them in', async () => {
  const visitor = await widget();
  const asked = harness.provider.requests.length;
  for (const text of ['one', 'two', 'three']) {
    visitor.say(text);
    expect((await visitor.next()).text).toBe('Fine.');
  }
  visitor.say('four');
  expect((await visitor.next()).text).toBe('You are sending messages faster than this chat accepts. Please wait a minute and send it again.');
  expect(harness.provider.requests.length).toBe(asked + 3);
  expect(harness.provider.requests.map((sent) => sent.messages.at(-1)!.content)).not.toContain('four');
});

it('refuses a new widget session past new_sessions_per_ip_per_hour, while sessions already counted go on', async () => {
  // Two sessions of this address have talked already (the tests above); a reloaded one still counts as one of them.
  const third = await widget();
  third.say('hello');
  expect((await third.next()).text).toBe('Too many new chats have been started from your network in the last hour. Please try again later.');
  const sessionKeys = (await harness.admin('GET', '/sessions?limit=100')).body.data.items.map((session: { session_key: string }) => session.session_key);
  expect(sessionKeys).not.toContain(`webchat::${third.sessionId!.slice(0, 32)}`);
  const reloaded = await widget({ sessionId: counted });
  reloaded.say('still here');
  expect((await reloaded.next()).text).toBe('Fine.');
});

it('refuses a page of a site not in allowed_origins, and lets an allowed one (with CORS) and origin-less clients in', async () => {
  await expect(Widget.open(harness.base, { origin: 'https://evil.example' })).rejects.toThrow();
  await expect(Widget.open(harness.base, { origin: 'https://evil.example', transports: ['websocket'] })).rejects.toThrow();
  // What the browser gets for the first polling request: 403 and the reason.
  const refused = await request(`${harness.base}/socket.io/?EIO=4&transport=polling`, { headers: { origin: 'https://evil.example' } });
  expect(refused.status).toBe(403);
  expect(refused.body.message).toBe('This site is not allowed to use this chat (its origin is not in channels.webchat.allowed_origins).');
  expect(refused.headers.get('access-control-allow-origin')).toBeNull();

  const allowed = await request(`${harness.base}/socket.io/?EIO=4&transport=polling`, { headers: { origin: SHOP } });
  expect(allowed.status).toBe(200);
  expect(allowed.headers.get('access-control-allow-origin')).toBe(SHOP);
  const shop = await widget({ origin: SHOP });
  expect(shop.sessionId).toMatch(/^[0-9a-f]{64}$/);
  // The hub's own origin (its demo page) is allowed without configuration.
  const own = await widget({ origin: harness.base });
  expect(own.sessionId).toMatch(/^[0-9a-f]{64}$/);
});

it('admits the handshake of widgets built on socket.io-client 2 (Engine.IO 3)', async () => {
  const legacy = await request(`${harness.base}/socket.io/?EIO=3&transport=polling`);
  expect(legacy.status).toBe(200);
  // Engine.IO 3 frames its payload as <length>:<packet>; the open packet names the session.
  expect(String(legacy.body)).toMatch(/^\d+:0\{"sid":"[^"]+"/);
});

it('answers a client that skipped session_request, and never logs the session secret', async () => {
  const bare = io(harness.base, { path: '/socket.io/', forceNew: true, reconnection: false });
  const answer = new Promise<{ text: string }>((resolve) => bare.once('bot_uttered', resolve));
  bare.on('connect', () => bare.emit('user_uttered', { message: 'hello?', session_id: null }));
  expect((await answer).text).toBe('This chat is not connected yet. Please reload the page.');
  bare.close();
  expect(harness.logs.text).not.toContain(SESSION_SECRET);
});
