import { jsonBody, request } from '../../helpers/http';
import { removeTempDirs } from '../../helpers/temp-dir';
import { forChat, startTelegramHarness, textUpdate, WEBHOOK_SECRET, type TelegramHarness } from './telegram-harness';

/**
 * 50 messages at once in one group, through the whole hub, against a fake Bot API that enforces
 * Telegram's limits (scaled down; its windows shorter than the hub's budget by what a loaded CI
 * machine's delivery jitter needs: 20 ms against 100 ms, 1.8 s against 2.4 s): every
 * message gets its reply and Telegram never answers 429. Whatever the chat's mid-turn policy makes
 * of the burst (a note for a message sent during a turn, or its own turn later), each reply quotes
 * the message it answers, and the one send budget paces them all.
 */
let h: TelegramHarness;

beforeAll(async () => {
  h = await startTelegramHarness('webhook', {
    editIntervalMs: 50,
    sendLimits: { per_chat: 1, per_chat_window_ms: 100, per_group: 20, per_group_window_ms: 2400, global: 30, global_window_ms: 100 },
  });
  h.telegram.rateLimit({ perChat: { limit: 1, windowMs: 20 }, perGroup: { limit: 20, windowMs: 1800 }, global: { limit: 30, windowMs: 20 } });
});

afterAll(async () => {
  await h.service.stop();
  await h.telegram.stop();
  removeTempDirs();
});

it('answers a burst of 50 messages in one group, every one, with no 429', async () => {
  h.provider.pieces = ['Here', ' is', ' an', ' answer.'];
  const updates = Array.from({ length: 50 }, (_, n) => textUpdate(-800, `question ${n}`));
  const acks = await Promise.all(
    updates.map((update) => request(`${h.api}/channels/telegram/webhook`, jsonBody(update, { 'x-telegram-bot-api-secret-token': WEBHOOK_SECRET }))),
  );
  expect(acks.map((ack) => ack.status)).toEqual(updates.map(() => 200));

  const answered = (messageId: number) =>
    h.telegram.calls.some(
      (call) => forChat(-800)(call) && call.method === 'sendMessage' && call.status === 200 && call.params.reply_parameters?.message_id === messageId,
    );
  for (const update of updates) await h.telegram.waitFor(() => answered(update.message.message_id), 30_000);

  expect(h.telegram.rateLimited).toEqual([]);
  expect(
    h.telegram.calls.filter((call) => forChat(-800)(call) && call.status === 200 && call.params.text === 'Here is an answer.').length,
  ).toBeGreaterThanOrEqual(1);
}, 45_000);
