import { decodeCallbackData } from '../../../adapters/telegram/callback-data';
import { APOLOGY_TEXT, CANCELLED_TEXT, STILL_ANSWERING_TEXT } from '../../../adapters/telegram/render';
import { jsonBody, request } from '../../helpers/http';
import { removeTempDirs } from '../../helpers/temp-dir';
import { auditRows } from '../../helpers/audit';
import { parametersDigest } from '../../../src/audit/digest';
import {
  BOT_TOKEN,
  clickUpdate,
  forChat,
  lastText,
  startTelegramHarness,
  textUpdate,
  waitForText,
  WEBHOOK_SECRET,
  type TelegramHarness,
} from './telegram-harness';

/**
 * The Telegram channel in webhook mode through the real stack: telegraf against a fake Bot API
 * server, the hub's ingest, queue, worker and event log, with a scripted model.
 */
let h: TelegramHarness;

beforeAll(async () => {
  // One contact (99) has a daily budget of one token: their second turn is refused.
  h = await startTelegramHarness('webhook', { usage: { budgets: { users: { 'telegram:99': 1 } } } });
});

afterAll(async () => {
  await h.service.stop();
  await h.telegram.stop();
  removeTempDirs();
});

const webhook = () => `${h.api}/channels/telegram/webhook`;
const deliver = (update: unknown, secret: string | null = WEBHOOK_SECRET) =>
  request(webhook(), jsonBody(update, secret === null ? {} : { 'x-telegram-bot-api-secret-token': secret }));
const admin = () => ({ authorization: `Bearer ${h.adminToken}` });

async function sessionOf(chatId: number): Promise<any> {
  const sessions = await request(`${h.api}/sessions`, { headers: admin() });
  return sessions.body.data.items.find((item: any) => item.session_key === `telegram::${chatId}`);
}

async function until(check: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Waits until the chat's reply ends with `text` as a final edit or message. */
const finalText = (chatId: number, text: string) => waitForText(h.telegram, chatId, text);

it('streams a private reply as a draft, then sends it as one message; acknowledges after storing', async () => {
  h.provider.pieces = ['Hello', ' there', ', friend', '.'];
  h.provider.pauseBefore = 2;
  const update = textUpdate(101, 'hi bot');
  const response = await deliver(update);
  expect(response.status).toBe(200);
  // Acknowledged only once stored: the session and the user message exist already.
  const session = await sessionOf(101);
  expect(session).toMatchObject({ channel: 'telegram', name: 'telegram: Ada Lovelace' });
  const history = await request(`${h.api}/sessions/${session.id}/messages`, { headers: admin() });
  expect(history.body.data.items.filter((m: any) => m.role === 'user').map((m: any) => m.content)).toEqual(['hi bot']);

  await h.provider.paused();
  await h.telegram.waitFor((call) => call.method === 'sendMessageDraft' && forChat(101)(call) && call.params.text === 'Hello there');
  h.provider.pauseBefore = null;
  h.provider.release();
  await finalText(101, 'Hello there, friend.');

  const chatCalls = h.telegram.calls.filter(forChat(101)).filter((call) => call.method !== 'sendChatAction');
  const drafts = chatCalls.filter((call) => call.method === 'sendMessageDraft');
  // One draft per turn (the user message's id), growing; the answer is one message quoting the question.
  expect(new Set(drafts.map((draft) => draft.params.draft_id))).toEqual(new Set([update.message.message_id]));
  expect(chatCalls.filter((call) => call.method === 'editMessageText')).toEqual([]);
  expect(chatCalls.filter((call) => call.method === 'sendMessage').map((call) => call.params)).toEqual([
    { chat_id: 101, text: 'Hello there, friend.', reply_parameters: { message_id: update.message.message_id, allow_sending_without_reply: true } },
  ]);
  expect(chatCalls.at(-1)!.method).toBe('sendMessage');
});

it('refuses a missing or wrong secret without taking the update in', async () => {
  const before = h.provider.requests.length;
  const missing = await deliver(textUpdate(102, 'no secret'), null);
  expect(missing.status).toBe(401);
  // The hub's error envelope, like every other refusal (it was `{error}` alone).
  expect(missing.body).toEqual({
    data: null,
    error: { code: 'UNAUTHORIZED', message: 'The webhook secret token is missing or wrong.', details: {} },
    meta: { request_id: missing.headers.get('x-request-id'), timestamp: expect.any(String) },
  });
  expect((await deliver(textUpdate(102, 'wrong secret'), 'not-the-secret')).status).toBe(401);
  expect((await deliver(textUpdate(102, 'almost'), `${WEBHOOK_SECRET}x`)).status).toBe(401);
  await new Promise((resolve) => setTimeout(resolve, 300));
  expect(await sessionOf(102)).toBeUndefined();
  expect(h.provider.requests.length).toBe(before);
  expect(h.telegram.calls.filter(forChat(102))).toEqual([]);
});

it('makes no second turn for a redelivered update', async () => {
  h.provider.pieces = ['Once.'];
  const update = textUpdate(103, 'deliver me twice');
  expect((await deliver(update)).status).toBe(200);
  await finalText(103, 'Once.');
  const requests = h.provider.requests.length;
  expect((await deliver(update)).status).toBe(200);
  expect((await deliver(update)).status).toBe(200);
  await new Promise((resolve) => setTimeout(resolve, 300));
  expect(h.provider.requests.length).toBe(requests);
  expect(h.telegram.calls.filter((call) => call.method === 'sendMessage' && forChat(103)(call))).toHaveLength(1);
  const history = await request(`${h.api}/sessions/${(await sessionOf(103)).id}/messages`, { headers: admin() });
  expect(history.body.data.items.filter((m: any) => m.role === 'user')).toHaveLength(1);
});

it('queues a message sent while the chat’s turn runs: 👀 on it until its turn starts, then its own answer; an edit before then changes what is answered', async () => {
  h.provider.pieces = ['Slow', ' answer.'];
  h.provider.pauseBefore = 1;
  await deliver(textUpdate(104, 'first'));
  await h.provider.paused();
  const requests = h.provider.requests.length;
  const second = textUpdate(104, 'secnd');
  expect((await deliver(second)).status).toBe(200);
  const key = `104:${second.message.message_id}`;
  await until(() => (h.telegram.reactions.get(key) ?? []).join() === '👀');
  // The person fixes the typo before its turn starts: the turn answers the edited text.
  const edited = { update_id: second.update_id + 1000, edited_message: { ...second.message, text: 'second', edit_date: Math.floor(Date.now() / 1000) } };
  expect((await deliver(edited)).status).toBe(200);
  h.provider.pauseBefore = null;
  h.provider.release();
  await until(() => h.telegram.calls.filter((call) => call.method === 'sendMessage' && forChat(104)(call) && call.params.text === 'Slow answer.').length === 2);
  await until(() => (h.telegram.reactions.get(key) ?? []).length === 0);
  expect(h.provider.requests.length).toBe(requests + 1);
  expect(
    h.provider.requests
      .at(-1)!
      .messages.filter((m) => m.role === 'user')
      .map((m) => m.content),
  ).toEqual(['first', 'second']);
  expect(h.telegram.calls.some((call) => call.method === 'sendMessage' && call.params.text === STILL_ANSWERING_TEXT)).toBe(false);
});

it('shows an internal error only as an apology, with the details in the logs', async () => {
  h.provider.pieces = ['Partial', ' never'];
  h.provider.failAt = 1;
  h.provider.failWith = new Error('database password is hunter2 at /srv/internal.ts:42');
  await deliver(textUpdate(105, 'break please'));
  await finalText(105, APOLOGY_TEXT);
  h.provider.failAt = null;
  h.provider.failWith = null;
  expect(JSON.stringify(h.telegram.calls.filter(forChat(105)))).not.toMatch(/hunter2|internal\.ts/);
  const logged = h.logs.entries().find((entry) => entry.msg === 'telegram: the turn reported an error');
  expect(logged).toMatchObject({ code: expect.any(String), session_id: (await sessionOf(105)).id });
});

it('answers /info@ThisBot in a group as the /info command', async () => {
  await deliver(textUpdate(-106, '/info@SwitchboardTestBot'));
  const reply = await waitForText(h.telegram, -106, /Model: scripted-1/);
  expect(reply.params.text).toMatch(/Tools: lookup, save_note/);
  // A command for another bot in the group is not ours.
  const requests = h.provider.requests.length;
  await deliver(textUpdate(-106, '/info@SomeOtherBot'));
  await new Promise((resolve) => setTimeout(resolve, 300));
  expect(h.telegram.calls.filter(forChat(-106)).filter((call) => call.method === 'sendMessage')).toHaveLength(1);
  expect(h.provider.requests.length).toBe(requests);
});

it('waits out a 429 retry_after and still delivers the reply', async () => {
  h.provider.pieces = ['After', ' the flood.'];
  h.telegram.floodOnce('sendMessage', 1);
  const started = Date.now();
  await deliver(textUpdate(107, 'flood me'));
  await finalText(107, 'After the flood.');
  expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
  const answers = h.telegram.calls.filter((call) => call.method === 'sendMessage' && call.params.text === 'After the flood.' && forChat(107)(call));
  expect(answers.map((call) => call.status)).toEqual([429, 200]); // refused once, sent again after retry_after
});

it('tells a contact over their daily token budget so, in their chat, without calling the model', async () => {
  const from = { id: 99, first_name: 'Grace', last_name: null, username: 'grace' };
  h.provider.pieces = ['Hello', ' there', ', friend', '.'];
  await deliver(textUpdate(301, 'hello', undefined, from));
  await finalText(301, 'Hello there, friend.');
  const calls = h.provider.requests.length;
  await deliver(textUpdate(301, 'hello again', undefined, from));
  await finalText(301, 'You have used your daily token budget (1 token; 15 spent today). It starts again at 00:00 UTC.');
  expect(h.provider.requests.length).toBe(calls);
  // Ada (77) has no budget and is still answered.
  await deliver(textUpdate(302, 'hi'));
  await finalText(302, 'Hello there, friend.');
});

describe('confirmation buttons', () => {
  /** Asks for save_note in a fresh chat, clicks `action`, and returns what happened. */
  async function clickThrough(chatId: number, action: string) {
    const note = `note for ${action}`;
    h.provider.rounds = [{ calls: [{ id: `c-${chatId}`, name: 'save_note', arguments: JSON.stringify({ text: note }) }] }, { text: ['Ok.'] }];
    await deliver(textUpdate(chatId, 'save a note'));
    const asked = await h.telegram.waitFor((call) => forChat(chatId)(call) && call.method === 'sendMessage' && call.params.reply_markup !== undefined);
    const buttons = asked.params.reply_markup.inline_keyboard.flat();
    expect(buttons.map((button: any) => decodeCallbackData(button.callback_data)?.action)).toEqual([
      'allow',
      'deny',
      'allow_all',
      'disable',
      'forbid_all',
      'cancel',
    ]);
    for (const button of buttons) expect(Buffer.byteLength(button.callback_data)).toBeLessThanOrEqual(64);
    const chosen = buttons.find((button: any) => decodeCallbackData(button.callback_data)?.action === action);
    const click = clickUpdate({ message_id: asked.result.message_id, chat_id: chatId, text: asked.params.text }, chosen.callback_data);
    expect((await deliver(click)).status).toBe(200);
    await h.telegram.waitFor((call) => call.method === 'answerCallbackQuery' && call.params.callback_query_id === click.callback_query.id);
    const shown = await h.telegram.waitFor((call) => call.method === 'editMessageText' && call.params.message_id === asked.result.message_id);
    expect(shown.params.text).toContain(asked.params.text);
    expect(shown.params.reply_markup).toBeUndefined();
    const session = await sessionOf(chatId);
    // The audit trail names the Telegram user who pressed the button, the action and a digest of the parameters.
    const [row] = await auditRows(h.api, h.adminToken, { kind: 'tool.confirmation', session_id: session.id });
    expect(row).toMatchObject({ actor: { key: 'telegram:77', kind: 'contact', name: 'Ada' }, subject: 'save_note', action, session_id: session.id });
    expect(row!.details).toMatchObject({ ...parametersDigest({ text: note }), waited_ms: expect.any(Number) });
    expect(JSON.stringify(row)).not.toContain(note);
    const ran = () => h.tools.runs.filter((run) => run.input.text === note);
    return { session, ran, asked };
  }

  const toolStatus = async (sessionId: string) =>
    (await request(`${h.api}/sessions/${sessionId}/tools`, { headers: admin() })).body.data.find((tool: any) => tool.name === 'save_note');

  it('allow runs the call once', async () => {
    const { ran } = await clickThrough(201, 'allow');
    await finalText(201, 'Ok.');
    expect(ran()).toHaveLength(1);
  });

  it('deny does not run it', async () => {
    const { ran } = await clickThrough(202, 'deny');
    await finalText(202, 'Ok.');
    expect(ran()).toEqual([]);
  });

  it('allow_all runs it and approves the tool for the session', async () => {
    const { ran, session } = await clickThrough(203, 'allow_all');
    await finalText(203, 'Ok.');
    expect(ran()).toHaveLength(1);
    expect((await toolStatus(session.id)).auto_approved).toBe(true);
  });

  it('disable refuses it and disables the tool for the session', async () => {
    const { ran, session } = await clickThrough(204, 'disable');
    await finalText(204, 'Ok.');
    expect(ran()).toEqual([]);
    expect((await toolStatus(session.id)).status).toBe('disabled');
  });

  it('forbid_all refuses every tool call of the turn', async () => {
    const { ran } = await clickThrough(205, 'forbid_all');
    await finalText(205, 'Ok.');
    expect(ran()).toEqual([]);
    const lastRequest = h.provider.requests.at(-1)!;
    expect(lastRequest.messages.at(-1)!.content).toMatch(/blocked all further tool use/);
  });

  it('cancel ends the turn, shown as cancelled', async () => {
    const { ran } = await clickThrough(206, 'cancel');
    await finalText(206, CANCELLED_TEXT);
    expect(ran()).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(lastText(h.telegram, 206)).toBe(CANCELLED_TEXT);
  });

  it('a second click on an answered confirmation is told it is no longer pending', async () => {
    const { asked } = await clickThrough(207, 'allow');
    await finalText(207, 'Ok.');
    const data = asked.params.reply_markup.inline_keyboard[0][0].callback_data;
    const again = clickUpdate({ message_id: asked.result.message_id, chat_id: 207, text: asked.params.text }, data);
    await deliver(again);
    const answer = await h.telegram.waitFor((call) => call.method === 'answerCallbackQuery' && call.params.callback_query_id === again.callback_query.id);
    expect(answer.params.text).toBe('This request is no longer pending.');
  });
});

describe('routing', () => {
  it('a workflow bound to telegram:42 routes chat 42 only', async () => {
    const workflow = {
      name: 'invoices',
      system_prompt: 'You handle invoices for chat forty-two.',
      tool_list: 'lookup',
      triggers: { keywords: ['invoice'] },
      binding_channels: ['telegram:42'],
    };
    expect((await request(`${h.api}/assistant/workflows`, jsonBody(workflow, admin()))).status).toBe(201);
    h.provider.pieces = ['Routed.'];
    await deliver(textUpdate(42, 'about my invoice'));
    await finalText(42, 'Routed.');
    await deliver(textUpdate(43, 'about my invoice'));
    await finalText(43, 'Routed.');
    const id = (await request(`${h.api}/assistant/workflows/invoices`, { headers: admin() })).body.data.id;
    expect((await sessionOf(42)).active_workflow_id).toBe(id);
    expect((await sessionOf(43)).active_workflow_id).toBeNull();
  });
});

it('never writes the bot token or the webhook secret to the logs', () => {
  expect(h.logs.lines.length).toBeGreaterThan(0);
  expect(h.logs.text).not.toContain(BOT_TOKEN);
  expect(h.logs.text).not.toContain(WEBHOOK_SECRET);
});
