import pino from 'pino';
import { Telegram } from 'telegraf';
import { TurnPresenter } from '../../../adapters/shared/turn-presenter';
import { chatSurface } from '../../../adapters/telegram/chat-surface';
import type { TurnOutcome } from '../../../src/core/follow-turn';
import { TELEGRAM_DEFAULTS, type TelegramSendLimits } from '../../../adapters/telegram/config';
import { TelegramSender } from '../../../adapters/telegram/sender';
import { TelegramSendBudget, type ChatTarget } from '../../../adapters/telegram/telegram-budget';
import { TypingIndicator } from '../../../adapters/telegram/typing';
import type { AgentEvent, SessionFrame } from '../../../src/core/events';
import { FakeTelegramApi } from '../../fakes/telegram-api';
import { LogCapture } from '../../helpers/log-capture';
import { BOT_TOKEN, forChat } from './telegram-harness';

/**
 * The renderer and the bot's send budget against the fake Bot API (real telegraf client, real HTTP),
 * fed a turn's frames directly: many turns at once in one chat, which the hub (one turn per chat at
 * a time) cannot start, and draft details too slow to watch through the whole stack.
 */
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Bot {
  fake: FakeTelegramApi;
  telegram: Telegram;
  sender: TelegramSender;
  typing: TypingIndicator;
  budget: TelegramSendBudget;
  logs: LogCapture;
}

let bot: Bot;

async function startBot(limits: TelegramSendLimits, typingIntervalMs = 200): Promise<Bot> {
  const fake = new FakeTelegramApi(BOT_TOKEN);
  await fake.start();
  const logs = new LogCapture();
  const logger = pino({ level: 'debug' }, logs);
  const budget = new TelegramSendBudget(limits);
  const telegram = new Telegram(BOT_TOKEN, { apiRoot: fake.apiRoot });
  const sender = new TelegramSender({ telegram, budget, botToken: BOT_TOKEN, maxAttempts: 3, maxRetryAfterMs: 30_000, logger });
  const typing = new TypingIndicator({ send: (chat) => sender.typing(chat), intervalMs: typingIntervalMs, onFailure: () => undefined });
  return { fake, telegram, sender, typing, budget, logs };
}

afterEach(async () => {
  bot.typing.stopAll();
  bot.budget.abandonWaiting();
  await bot.fake.stop();
});

let seq = 0;
const frame = (event: AgentEvent): SessionFrame => ({ ...event, session_id: 's', seq: seq++, ts: new Date().toISOString() }) as SessionFrame;

/** One turn in the chat: the shared presenter on Telegram's reply surface. */
interface ChatRenderer {
  push(frame: SessionFrame): void;
  finishTurn(outcome: TurnOutcome): Promise<void>;
}

function renderer(
  chat: ChatTarget,
  options: { draftId?: number | null; replyTo?: number; interimIntervalMs?: number; draftKeepAliveMs?: number } = {},
): ChatRenderer {
  const surface = chatSurface({
    sender: bot.sender,
    typing: bot.typing,
    chat,
    replyTo: options.replyTo ?? null,
    draftId: options.draftId ?? null,
    interimIntervalMs: options.interimIntervalMs ?? Math.max(50, bot.budget.interimGapMs(chat)),
    draftKeepAliveMs: options.draftKeepAliveMs ?? TELEGRAM_DEFAULTS.draftKeepAliveMs,
    maxMessageChars: 4096,
  });
  const presenter = new TurnPresenter(surface, { logger: pino({ level: 'silent' }), channel: 'telegram', sessionId: '0f8fad5b-d9cb-469f-a165-70867728950e' });
  return { push: (frame) => presenter.frame(frame), finishTurn: (outcome) => presenter.end(outcome) };
}

/** One turn: thinking, `words` streamed `gapMs` apart, then done with the whole text. */
async function runTurn(render: ChatRenderer, words: string[], gapMs: number): Promise<string> {
  render.push(frame({ type: 'agent_state', payload: { state: 'thinking' } }));
  for (const word of words) {
    render.push(frame({ type: 'token', payload: { text: word, final: false } }));
    await sleep(gapMs);
  }
  const text = words.join('');
  const done = { message_id: 'm', total_tokens: 1, input_tokens: 1, output_tokens: 1, duration_ms: 1, tool_calls: 0, text };
  render.push(frame({ type: 'done', payload: done }));
  await render.finishTurn({ kind: 'done', done });
  return text;
}

describe('a burst of 50 concurrent turns in one group chat', () => {
  // Telegram's limits scaled down (a chat's one a second becomes one in 100 ms, a group's 20 a minute
  // 20 in 2.4 s). The fake judges arrivals, the budget the moment a call takes its slot; on a loaded
  // machine a call can be held between the two (the first call through a cold client took ~36 ms
  // here idle, more than 80 ms in CI, and the next call, on time, arrived within 20 ms of it). So
  // the fake takes two calls in 20 ms (what one late call makes of a paced chat) and 20 in 1.8 s;
  // a hub that did not pace would send a burst's calls a few milliseconds apart and still fail.
  const limits: TelegramSendLimits = { perChat: { sends: 1, windowMs: 100 }, perGroup: { sends: 20, windowMs: 2400 }, global: { sends: 30, windowMs: 100 } };

  it('delivers every answer whole, in the group budget, with no 429', async () => {
    bot = await startBot(limits);
    // As the adapter does at start: the client's first call (and its lazy loading) is over before the burst.
    await bot.telegram.getMe();
    bot.fake.rateLimit({ perChat: { limit: 2, windowMs: 20 }, perGroup: { limit: 20, windowMs: 1800 }, global: { limit: 30, windowMs: 20 } });
    const group: ChatTarget = { id: -700, group: true };
    const started = Date.now();
    const texts = await Promise.all(
      Array.from({ length: 50 }, (_, turn) =>
        runTurn(
          renderer(group, { replyTo: 9000 + turn }),
          Array.from({ length: 8 }, (_, k) => `t${turn}w${k} `),
          25,
        ),
      ),
    );
    const elapsed = Date.now() - started;

    expect(bot.fake.rateLimited).toEqual([]);
    const shown = bot.fake.calls.filter((call) => forChat(-700)(call) && call.status === 200 && ['sendMessage', 'editMessageText'].includes(call.method));
    // Every turn ends showing its whole answer, as a message or the last edit of its message.
    const finalTexts = new Set(shown.map((call) => call.params.text));
    for (const text of texts) expect(finalTexts.has(text)).toBe(true);
    // Each answer is one message quoting its question: 50 sends; interim edits only took free slots.
    const sends = shown.filter((call) => call.method === 'sendMessage');
    expect(new Set(sends.map((call) => call.params.reply_parameters?.message_id)).size).toBe(50);
    expect(sends).toHaveLength(50);
    // 20 per 2.4 s: 50 messages need at least two more windows after the first 20.
    expect(elapsed).toBeGreaterThanOrEqual(2 * 2400);
    // One typing loop for the chat, however many turns run in it.
    const typing = bot.fake.calls.filter((call) => forChat(-700)(call) && call.method === 'sendChatAction');
    expect(typing.length).toBeLessThanOrEqual(Math.ceil(elapsed / 200) + 2);
  }, 30_000);
});

const ROOMY: TelegramSendLimits = {
  perChat: { sends: 100, windowMs: 1000 },
  perGroup: { sends: 20, windowMs: 60_000 },
  global: { sends: 100, windowMs: 1000 },
};

describe('drafts', () => {
  it('are sent again while the text does not change (Telegram drops a draft after about 30 s)', async () => {
    bot = await startBot(ROOMY);
    const chat: ChatTarget = { id: 710, group: false };
    const render = renderer(chat, { draftId: 5, interimIntervalMs: 50, draftKeepAliveMs: 200 });
    render.push(frame({ type: 'agent_state', payload: { state: 'thinking' } }));
    render.push(frame({ type: 'token', payload: { text: 'Working on it', final: false } }));
    // The first at once, then one about every 200 ms: waited for as counts, never as a wall-clock window.
    for (let waited = 0; bot.fake.callsOf('sendMessageDraft').length < 4 && waited < 10_000; waited += 20) await sleep(20);
    const drafts = bot.fake.callsOf('sendMessageDraft');
    expect(drafts.length).toBeGreaterThanOrEqual(4);
    // None in between (nothing changed): consecutive drafts are a keep-alive apart (a busy machine only widens gaps).
    const gaps = drafts.slice(1).map((draft, index) => draft.at! - drafts[index]!.at!);
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(150);
    expect(drafts.every((draft) => draft.params.text === 'Working on it' && draft.params.draft_id === 5)).toBe(true);
    await render.finishTurn({ kind: 'cancelled' });
    // A cancelled turn keeps what was streamed (a draft vanishes), then says so.
    expect(bot.fake.callsOf('sendMessage').map((call) => call.params.text)).toEqual(['Working on it', 'Cancelled.']);
  });

  it('refused with 400 mid-turn: the turn goes on as edits, and later turns do not try drafts', async () => {
    bot = await startBot(ROOMY);
    bot.fake.refuseDrafts = 'bad-request';
    const chat: ChatTarget = { id: 711, group: false };
    await runTurn(renderer(chat, { draftId: 1, interimIntervalMs: 30 }), ['Partly', ' there', ' now.'], 60);
    expect(bot.sender.draftsRefused).toBe('400: Bad Request: drafts are not available for this bot');
    expect(bot.fake.callsOf('sendMessageDraft')).toHaveLength(1);
    const shown = bot.fake.calls.filter((call) => ['sendMessage', 'editMessageText'].includes(call.method)).map((call) => [call.method, call.params.text]);
    expect(shown[0]).toEqual(['sendMessage', expect.stringMatching(/^Partly/)]);
    expect(shown.at(-1)).toEqual(['editMessageText', 'Partly there now.']);

    await runTurn(renderer(chat, { draftId: 2, interimIntervalMs: 30 }), ['Again.'], 10);
    expect(bot.fake.callsOf('sendMessageDraft')).toHaveLength(1);
  });
});

it('a 429 pauses the chat for retry_after, and the answer still arrives', async () => {
  bot = await startBot(TELEGRAM_DEFAULTS.sendLimits);
  bot.fake.floodOnce('sendMessage', 1);
  const chat: ChatTarget = { id: -712, group: true };
  const render = renderer(chat);
  const started = Date.now();
  await runTurn(render, ['Flooded'], 0);
  const answers = bot.fake.callsOf('sendMessage');
  expect(answers.map((call) => call.status)).toEqual([429, 200]);
  expect(answers[1]!.at! - started).toBeGreaterThanOrEqual(1000);
  expect(bot.budget.tryTake(chat)).toBe(false); // the chat's one-a-second window holds the answer's slot
});

it('sends the answer anew when its streamed message was deleted in the meantime', async () => {
  bot = await startBot(ROOMY);
  const chat: ChatTarget = { id: -713, group: true };
  const render = renderer(chat, { replyTo: 77, interimIntervalMs: 20 });
  render.push(frame({ type: 'agent_state', payload: { state: 'thinking' } }));
  render.push(frame({ type: 'token', payload: { text: 'Soon gone', final: false } }));
  const streamed = await bot.fake.waitFor((call) => call.method === 'sendMessage' && call.status === 200);
  bot.fake.deleteMessage(streamed.result.message_id);
  const done = { message_id: 'm', total_tokens: 1, input_tokens: 1, output_tokens: 1, duration_ms: 1, tool_calls: 0, text: 'Soon gone, and back.' };
  await render.finishTurn({ kind: 'done', done });
  const shown = bot.fake.calls
    .filter((call) => ['sendMessage', 'editMessageText'].includes(call.method))
    .map((call) => [call.method, call.status, call.params.text]);
  expect(shown).toEqual([
    ['sendMessage', 200, 'Soon gone'],
    ['editMessageText', 400, 'Soon gone, and back.'],
    ['sendMessage', 200, 'Soon gone, and back.'],
  ]);
  expect(bot.fake.calls.at(-1)!.params.reply_parameters).toEqual({ message_id: 77, allow_sending_without_reply: true });
});
