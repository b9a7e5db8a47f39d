import { jsonBody, request } from '../../helpers/http';
import { removeTempDirs } from '../../helpers/temp-dir';
import type { TelegramCall } from '../../fakes/telegram-api';
import { decodeCallbackData } from '../../../adapters/telegram/callback-data';
import { clickUpdate, forChat, startTelegramHarness, textUpdate, waitForText, WEBHOOK_SECRET, type TelegramHarness } from './telegram-harness';

/**
 * How replies stream through the whole hub (webhook, ingest, worker, event log, scripted model)
 * into a fake Bot API that enforces Telegram's flood limits (scaled down): drafts in private chats,
 * an edited message in groups, "typing…" while a turn runs, long answers split, and the fallback
 * when Telegram refuses drafts. The fake's windows are shorter than the hub's send budget (per chat
 * and overall 60 ms against 100 ms, per group 1.8 s against 2 s): the budget must keep every call
 * inside them even when requests arrive out of step. The margin is what a loaded CI machine's
 * delivery jitter needs (a 90 ms window, tried first, failed there when one call arrived 10 ms late);
 * a hub that did not pace at all would still send a chat's calls milliseconds apart and fail.
 */
const TYPING_INTERVAL_MS = 200;
const SEND_LIMITS = { per_chat: 1, per_chat_window_ms: 100, per_group: 20, per_group_window_ms: 2000, global: 30, global_window_ms: 100 };

let h: TelegramHarness;

beforeAll(async () => {
  h = await startTelegramHarness('webhook', { editIntervalMs: 50, typingIntervalMs: TYPING_INTERVAL_MS, sendLimits: SEND_LIMITS });
  h.telegram.rateLimit({ perChat: { limit: 1, windowMs: 60 }, perGroup: { limit: 20, windowMs: 1800 }, global: { limit: 30, windowMs: 60 } });
});

afterAll(async () => {
  await h.service.stop();
  await h.telegram.stop();
  removeTempDirs();
});

afterEach(() => {
  // Whatever the test did, Telegram never had to say "too many requests".
  expect(h.telegram.rateLimited).toEqual([]);
  h.provider.pauseBefore = null;
});

const deliver = async (update: Record<string, any>) => {
  const response = await request(`${h.api}/channels/telegram/webhook`, jsonBody(update, { 'x-telegram-bot-api-secret-token': WEBHOOK_SECRET }));
  expect(response.status).toBe(200);
};
const chatCalls = (chatId: number, method?: string): TelegramCall[] =>
  h.telegram.calls.filter((call) => forChat(chatId)(call) && (method === undefined || call.method === method));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Streams `pieces` with a pause before piece `pauseAt`, held for `holdMs`; resolves when released. */
async function streamWithPause(pieces: string[], pauseAt: number, holdMs: number): Promise<void> {
  h.provider.pieces = pieces;
  h.provider.pauseBefore = pauseAt;
  await h.provider.paused();
  await sleep(holdMs);
  h.provider.pauseBefore = null;
  h.provider.release();
}

describe('private chats', () => {
  it('stream the answer as one growing draft, then send it as one message', async () => {
    const update = textUpdate(601, 'tell me');
    const streamed = streamWithPause(['One', ' two', ' three', ' four.'], 2, 300);
    await deliver(update);
    await streamed;
    await waitForText(h.telegram, 601, 'One two three four.');

    const drafts = chatCalls(601, 'sendMessageDraft');
    expect(drafts.length).toBeGreaterThanOrEqual(1);
    expect(drafts.every((draft) => draft.params.draft_id === update.message.message_id && draft.status === 200)).toBe(true);
    expect(drafts[0]!.params.text).toBe('One two');
    expect(chatCalls(601, 'editMessageText')).toEqual([]);
    expect(chatCalls(601, 'sendMessage').map((call) => call.params.text)).toEqual(['One two three four.']);
  });

  it('send an answer over 4,096 characters as several messages cut at paragraph breaks, in order', async () => {
    const paragraphs = Array.from({ length: 5 }, (_, n) => `Paragraph ${n}: ${'words and more words. '.repeat(90).trim()}`);
    h.provider.pieces = paragraphs.map((paragraph, n) => (n === 0 ? paragraph : `\n\n${paragraph}`));
    await deliver(textUpdate(602, 'a long one please'));
    await waitForText(h.telegram, 602, paragraphs[4]!, 10_000);

    const sent = chatCalls(602, 'sendMessage');
    expect(sent.every((call) => call.status === 200 && call.params.text.length <= 4096)).toBe(true);
    expect(sent.map((call) => call.params.text)).toEqual([paragraphs.slice(0, 2).join('\n\n'), paragraphs.slice(2, 4).join('\n\n'), paragraphs[4]]);
    // Only the first message quotes the question; drafts never exceeded the limit either.
    expect(sent.map((call) => call.params.reply_parameters !== undefined)).toEqual([true, false, false]);
    expect(chatCalls(602, 'sendMessageDraft').every((call) => call.params.text.length <= 4096)).toBe(true);
  });
});

describe('groups', () => {
  it('stream the answer as one message edited in place, paced to the group budget', async () => {
    const pieces = Array.from({ length: 12 }, (_, n) => (n === 0 ? 'w0' : ` w${n}`));
    const update = textUpdate(-601, 'group question');
    const streamed = streamWithPause(pieces, 6, 700);
    await deliver(update);
    await streamed;
    const full = pieces.join('');
    await waitForText(h.telegram, -601, full);

    expect(chatCalls(-601, 'sendMessageDraft')).toEqual([]);
    const messages = chatCalls(-601).filter((call) => ['sendMessage', 'editMessageText'].includes(call.method));
    const [first, ...edits] = messages;
    // The first view is a message quoting the question; every later one edits it.
    expect(first).toMatchObject({ method: 'sendMessage', status: 200, params: { reply_parameters: { message_id: update.message.message_id } } });
    expect(edits.length).toBeGreaterThanOrEqual(1);
    expect(edits.every((edit) => edit.method === 'editMessageText' && edit.params.message_id === first!.result.message_id)).toBe(true);
    expect(edits.at(-1)!.params.text).toBe(full);
    // 20 per 2 s is one every 100 ms: the 700 ms pause shows at most a handful of views.
    for (let k = 1; k < messages.length; k++) expect(messages[k]!.at! - messages[k - 1]!.at!).toBeGreaterThanOrEqual(50);
  });
});

it('re-sends "typing…" every interval while a turn runs, and stops before the answer', async () => {
  const streamed = streamWithPause(['Slow', ' and', ' steady.'], 1, 1100);
  await deliver(textUpdate(603, 'take your time'));
  await streamed;
  const answer = await waitForText(h.telegram, 603, 'Slow and steady.');
  await sleep(3 * TYPING_INTERVAL_MS);

  const typing = chatCalls(603, 'sendChatAction');
  expect(typing.every((call) => call.params.action === 'typing')).toBe(true);
  // About 1.1 s of work at one every 200 ms: the first at the start, then every interval.
  expect(typing.length).toBeGreaterThanOrEqual(5);
  const gaps = typing.slice(1).map((call, k) => call.at! - typing[k]!.at!);
  for (const gap of gaps) {
    expect(gap).toBeGreaterThanOrEqual(TYPING_INTERVAL_MS - 20);
    expect(gap).toBeLessThan(TYPING_INTERVAL_MS * 3);
  }
  // None after the answer: the client would show "typing…" under a finished reply.
  expect(typing.every((call) => call.at! <= answer.at!)).toBe(true);
});

it('stops "typing…" while a confirmation waits for a person, and resumes once it is answered', async () => {
  h.provider.rounds = [{ calls: [{ id: 'c-606', name: 'save_note', arguments: JSON.stringify({ text: 'remember' }) }] }, { text: ['Saved.'] }];
  await deliver(textUpdate(606, 'save a note'));
  const asked = await h.telegram.waitFor((call) => forChat(606)(call) && call.method === 'sendMessage' && call.params.reply_markup !== undefined);
  await sleep(4 * TYPING_INTERVAL_MS);
  const typingAt = () => chatCalls(606, 'sendChatAction').map((call) => call.at!);
  expect(typingAt().length).toBeGreaterThanOrEqual(1);
  expect(typingAt().every((at) => at <= asked.at!)).toBe(true);

  const allow = asked.params.reply_markup.inline_keyboard.flat().find((button: any) => decodeCallbackData(button.callback_data)?.action === 'allow');
  const clicked = Date.now();
  await deliver(clickUpdate({ message_id: asked.result.message_id, chat_id: 606, text: asked.params.text }, allow.callback_data));
  await waitForText(h.telegram, 606, 'Saved.');
  expect(typingAt().filter((at) => at >= clicked).length).toBeGreaterThanOrEqual(1);
});

describe('when Telegram refuses drafts (the last tests: the refusal is remembered for the bot)', () => {
  it('streams that reply as edits instead, and tells the logs once', async () => {
    h.telegram.refuseDrafts = 'unknown-method';
    const streamed = streamWithPause(['Plan', ' B', ' works.'], 2, 300);
    await deliver(textUpdate(604, 'try drafts'));
    await streamed;
    await waitForText(h.telegram, 604, 'Plan B works.');

    expect(chatCalls(604, 'sendMessageDraft').map((call) => call.status)).toEqual([404]);
    const [first, ...edits] = chatCalls(604).filter((call) => ['sendMessage', 'editMessageText'].includes(call.method));
    expect(first).toMatchObject({ method: 'sendMessage', params: { text: 'Plan B' } });
    expect(edits.map((edit) => [edit.method, edit.params.text])).toEqual([['editMessageText', 'Plan B works.']]);
    expect(h.logs.entries().filter((entry) => /sendMessageDraft refused/.test(String(entry.msg)))).toHaveLength(1);
  });

  it('does not try drafts again in any chat', async () => {
    h.telegram.refuseDrafts = null;
    const streamed = streamWithPause(['Still', ' edits.'], 1, 200);
    await deliver(textUpdate(605, 'and now?'));
    await streamed;
    await waitForText(h.telegram, 605, 'Still edits.');
    expect(chatCalls(605, 'sendMessageDraft')).toEqual([]);
  });
});
