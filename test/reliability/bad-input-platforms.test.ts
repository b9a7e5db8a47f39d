import fc from 'fast-check';
import { removeTempDirs } from '../helpers/temp-dir';
import { scaled } from './scale';
import { FAKE_SLACK, startBadInputHub, expectRunPassed, type BadInputHub, type RawRequest } from './support/bad-input-hub';
import { anyJson, draw, hostileString } from './support/bad-input-values';

/**
 * Bad input on the chat platforms' webhooks of a real hub process (Slack Events API and Telegram
 * webhook, both configured against the fake platform servers): mis-signed, truncated, wrongly shaped
 * and unknown payloads. Pass: no 5xx, every refusal in the documented envelope, unknown event types
 * acknowledged (200, nothing stored), well-formed messages stored (read back as sessions), no hang,
 * RSS back within 20 %.
 */

const N = scaled({ slack: 120, telegram: 120 }, { slack: 1_300, telegram: 1_300 });

let hub: BadInputHub;
let rssBaselineKiB = 0;
/** Webhook acknowledgements have the platform's shape; refusals are checked as everywhere. */
const ACK = { platformAck: true };
let updateId = 1;
let eventId = 1;

beforeAll(async () => {
  hub = await startBadInputHub();
}, 120_000);

afterAll(async () => {
  await hub?.stop();
  removeTempDirs();
});

const slackEnvelope = (event: unknown) => JSON.stringify({ token: 'legacy', team_id: FAKE_SLACK.teamId, api_app_id: 'A1', type: 'event_callback', event_id: `EvBad${eventId++}`, event_time: Math.floor(Date.now() / 1000), event });
const dm = (text: string, user = 'U1') => ({ type: 'message', channel_type: 'im', channel: `D${user}`, user, text, ts: `${1_700_000_000 + eventId}.000100` });
const telegramMessage = (text: unknown, chatId = 4242) => ({ update_id: updateId++, message: { message_id: updateId, date: 1_700_000_000, chat: { id: chatId, type: 'private' }, from: { id: chatId, is_bot: false, first_name: 'Fuzz' }, text } });

/** Sessions the admin sees, by channel (chat channels' sessions are owned by the channel user). */
async function sessionCount(): Promise<number> {
  return (await hub.json('GET', '/sessions?limit=1'))!.json.data.total as number;
}

it('warms up, records the baseline RSS and starts the health probe', async () => {
  hub.check('warm-up', 'slack dm', await hub.send(hub.slackRequest(slackEnvelope(dm('hello')))), ACK);
  hub.check('warm-up', 'telegram message', await hub.send(hub.telegramRequest(JSON.stringify(telegramMessage('hello')))), ACK);
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  rssBaselineKiB = hub.rssKiB();
  hub.startProbe();
});

it('Slack: mis-signed, truncated, unknown event types, wrong shapes', async () => {
  const cases = draw(
    fc.oneof(
      fc.record({ kind: fc.constant('mis-signed'), how: fc.constantFrom('wrong-secret', 'stale', 'future', 'no-signature', 'v1', 'garbage-timestamp', 'empty') }),
      fc.record({ kind: fc.constant('truncated'), cut: fc.integer({ min: 0, max: 200 }), signed: fc.boolean() }),
      fc.record({ kind: fc.constant('unknown-type'), type: fc.oneof(fc.constantFrom('reaction_added', 'channel_created', 'team_join', 'app_home_opened', 'message.groups', '__proto__', 'constructor'), hostileString(20)) }),
      fc.record({ kind: fc.constant('shape'), field: fc.constantFrom('user', 'text', 'channel', 'ts', 'thread_ts', 'channel_type', 'type', 'event', 'subtype', 'message'), value: anyJson() }),
      fc.record({ kind: fc.constant('outer'), body: anyJson() }),
      fc.record({ kind: fc.constant('valid'), text: hostileString(60).map((text) => text.replace(/[\u0000\ud800-\udfff]/g, '') || 'hi') }),
    ),
    N.slack,
    21,
  );
  const before = await sessionCount();
  let valid = 0;
  for (const c of cases) {
    if (c.kind === 'mis-signed') {
      const body = slackEnvelope(dm('forged'));
      const now = Math.floor(Date.now() / 1000);
      const request: RawRequest = ({
        'wrong-secret': hub.slackRequest(body, { secret: 'not-the-secret' }),
        stale: hub.slackRequest(body, { timestamp: now - 3_600 }),
        future: hub.slackRequest(body, { timestamp: now + 3_600, signature: 'v0=00' }),
        'no-signature': { ...hub.slackRequest(body), headers: { 'content-type': 'application/json' } },
        v1: hub.slackRequest(body, { signature: 'v1=abc' }),
        'garbage-timestamp': { ...hub.slackRequest(body), headers: { 'content-type': 'application/json', 'x-slack-request-timestamp': 'NaN', 'x-slack-signature': 'v0=1' } },
        empty: hub.slackRequest('', { secret: 'x' }),
      } as Record<string, RawRequest>)[c.how]!;
      const answer = hub.check('slack-mis-signed', c.how, await hub.send(request), ACK);
      if (answer && answer.json?.error?.code !== 'UNAUTHORIZED') hub.violate('unexpected', `slack mis-signed ${c.how}`, `answered ${answer.status} ${answer.text.slice(0, 100)}`);
    } else if (c.kind === 'truncated') {
      const full = slackEnvelope(dm('cut'));
      const body = full.slice(0, Math.min(c.cut, full.length - 1));
      const answer = hub.check('slack-truncated', `cut at ${c.cut}`, await hub.send(hub.slackRequest(body, c.signed ? {} : { secret: 'x' })), ACK);
      if (answer && answer.status < 400) hub.violate('unexpected', `slack truncated ${c.cut}`, `accepted (${answer.status})`);
    } else if (c.kind === 'unknown-type') {
      const answer = hub.check('slack-unknown-type', c.type, await hub.send(hub.slackRequest(slackEnvelope({ type: c.type, user: 'U1', channel: 'C1', ts: '1.1' }))), ACK);
      if (answer && answer.status !== 200) hub.violate('unexpected', `slack unknown type ${JSON.stringify(c.type)}`, `answered ${answer.status}`);
    } else if (c.kind === 'shape') {
      const event = c.field === 'event' ? c.value : { ...dm('shape'), [c.field]: c.value };
      hub.check('slack-shape', `${c.field}=${JSON.stringify(c.value)?.slice(0, 60)}`, await hub.send(hub.slackRequest(slackEnvelope(event))), ACK);
    } else if (c.kind === 'outer') {
      hub.check('slack-shape', `body ${JSON.stringify(c.body)?.slice(0, 60)}`, await hub.send(hub.slackRequest(JSON.stringify(c.body) ?? 'null')), ACK);
    } else {
      // Each from its own user: one DM session each, and no turn in the way of the next.
      const answer = hub.check('slack-valid', c.text, await hub.send(hub.slackRequest(slackEnvelope(dm(c.text, `UV${valid}`)))), ACK);
      if (answer && answer.status !== 200) hub.violate('unexpected', `slack valid ${JSON.stringify(c.text)}`, `answered ${answer.status}`);
      else if (answer && /\S/.test(c.text)) valid += 1;
    }
  }
  // Every well-formed message was stored: one new session per DM.
  const after = await sessionCount();
  if (after - before < valid) hub.violate('not-stored', 'slack valid messages', `${valid} accepted, ${after - before} sessions created`);
}, 600_000);

it('Telegram: wrong secret, truncated, unknown update types, wrong shapes', async () => {
  const cases = draw(
    fc.oneof(
      fc.record({ kind: fc.constant('secret'), secret: fc.constantFrom(null, '', 'wrong', 'x'.repeat(5_000)) }),
      fc.record({ kind: fc.constant('truncated'), cut: fc.integer({ min: 0, max: 150 }) }),
      fc.record({ kind: fc.constant('unknown-type'), key: fc.constantFrom('channel_post', 'my_chat_member', 'poll', 'message_reaction', 'inline_query', 'business_message', 'chat_boost') }),
      fc.record({ kind: fc.constant('shape'), path: fc.constantFrom('update_id', 'message', 'message.chat', 'message.chat.id', 'message.chat.type', 'message.from', 'message.from.id', 'message.text', 'message.message_id', 'edited_message', 'callback_query', 'callback_query.from'), value: anyJson() }),
      fc.record({ kind: fc.constant('content-type'), type: fc.constantFrom('text/plain', 'application/x-www-form-urlencoded', '', 'application/json; charset=utf-16') }),
      fc.record({ kind: fc.constant('valid'), text: hostileString(60).map((text) => text.replace(/[\u0000\ud800-\udfff]/g, '') || 'hi') }),
    ),
    N.telegram,
    22,
  );
  const before = await sessionCount();
  const chats = new Set<number>();
  for (const c of cases) {
    if (c.kind === 'secret') {
      const answer = hub.check('telegram-secret', String(c.secret).slice(0, 20), await hub.send(hub.telegramRequest(JSON.stringify(telegramMessage('x')), c.secret)), ACK);
      if (answer && answer.json?.error?.code !== 'UNAUTHORIZED') hub.violate('unexpected', `telegram secret ${c.secret}`, `answered ${answer.status}`);
    } else if (c.kind === 'truncated') {
      const full = JSON.stringify(telegramMessage('cut'));
      const answer = hub.check('telegram-truncated', `cut at ${c.cut}`, await hub.send(hub.telegramRequest(full.slice(0, Math.min(c.cut, full.length - 1)))), ACK);
      if (answer && answer.status < 400) hub.violate('unexpected', `telegram truncated ${c.cut}`, `accepted (${answer.status})`);
    } else if (c.kind === 'unknown-type') {
      const answer = hub.check('telegram-unknown-type', c.key, await hub.send(hub.telegramRequest(JSON.stringify({ update_id: updateId++, [c.key]: { id: 1, chat: { id: 1, type: 'channel' } } }))), ACK);
      if (answer && answer.status !== 200) hub.violate('unexpected', `telegram unknown type ${c.key}`, `answered ${answer.status}`);
    } else if (c.kind === 'shape') {
      const update: any = telegramMessage('shape');
      if (c.path.startsWith('callback_query')) update.callback_query = { id: 'q', from: { id: 1, is_bot: false, first_name: 'x' }, data: 'x' };
      const keys = c.path.split('.');
      let target = update;
      for (const key of keys.slice(0, -1)) target = target[key];
      target[keys.at(-1)!] = c.value;
      hub.check('telegram-shape', `${c.path}=${JSON.stringify(c.value)?.slice(0, 60)}`, await hub.send(hub.telegramRequest(JSON.stringify(update))), ACK);
    } else if (c.kind === 'content-type') {
      hub.check('telegram-shape', `content-type ${c.type}`, await hub.send(hub.telegramRequest(JSON.stringify(telegramMessage('typed')), undefined, c.type)), ACK);
    } else {
      const chat = 100_000 + chats.size;
      const answer = hub.check('telegram-valid', c.text, await hub.send(hub.telegramRequest(JSON.stringify(telegramMessage(c.text, chat)))), ACK);
      if (answer && answer.status !== 200) hub.violate('unexpected', `telegram valid ${JSON.stringify(c.text)}`, `answered ${answer.status}`);
      else if (answer && c.text.trim() !== '') chats.add(chat);
    }
  }
  const after = await sessionCount();
  if (after - before < chats.size) hub.violate('not-stored', 'telegram valid messages', `${chats.size} chats accepted, ${after - before} sessions created`);
}, 600_000);

it('passes: no crash, no 5xx, no hang, refusals in the envelope, RSS back within 20 %', async () => {
  await expectRunPassed(hub, rssBaselineKiB);
}, 120_000);
