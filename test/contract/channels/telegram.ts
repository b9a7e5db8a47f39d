import { decodeCallbackData } from '../../../adapters/telegram/callback-data';
import { APOLOGY_TEXT } from '../../../adapters/telegram/render';
import { jsonBody, request } from '../../helpers/http';
import { clickUpdate, forChat, startTelegramHarness, textUpdate, waitForText, WEBHOOK_SECRET } from '../../adapters/telegram/telegram-harness';
import type { ChannelUnderTest, Conversation } from './channel-under-test';

/** Telegram: webhook updates in, telegraf out to a fake Bot API; a private chat per conversation. */
export async function startTelegram(): Promise<ChannelUnderTest> {
  const h = await startTelegramHarness('webhook');
  const deliver = async (update: unknown) => {
    const ack = await request(`${h.api}/channels/telegram/webhook`, jsonBody(update, { 'x-telegram-bot-api-secret-token': WEBHOOK_SECRET }));
    if (ack.status !== 200) throw new Error(`Telegram update refused: ${ack.status}`);
  };
  let conversations = 0;

  const conversation = async (): Promise<Conversation> => {
    conversations += 1;
    const chatId = 9000 + conversations;
    const key = `telegram::${chatId}`;
    const inChat = forChat(chatId);
    const shown = () =>
      h.telegram.calls.filter((call) => inChat(call) && call.status === 200 && typeof call.params.text === 'string').map((call) => call.params.text as string);
    return {
      expectedKey: key,
      expectedBinding: `telegram:${chatId}`,
      sessionId: async () => {
        const sessions = await request(`${h.api}/sessions?limit=100`, { headers: { authorization: `Bearer ${h.adminToken}` } });
        return sessions.body.data.items.find((item: any) => item.session_key === key).id;
      },
      send: async (text) => {
        const update = textUpdate(chatId, text);
        await deliver(update);
        // Telegram delivers an update again until the webhook answers 200: the same update_id.
        return { redeliver: () => deliver(update) };
      },
      showsWorking: async (prefix) => {
        await h.telegram.waitFor((call) => inChat(call) && call.method === 'sendMessageDraft' && String(call.params.text).startsWith(prefix));
      },
      showsAnswer: async (text) => void (await waitForText(h.telegram, chatId, text, 10_000)),
      confirmation: async () => {
        const asked = await h.telegram.waitFor((call) => inChat(call) && call.method === 'sendMessage' && call.params.reply_markup !== undefined, 10_000);
        const buttons = asked.params.reply_markup.inline_keyboard.flat();
        return {
          offered: buttons.map((button: any) => decodeCallbackData(button.callback_data)?.action ?? '?'),
          answer: async (action) => {
            const button = buttons.find((candidate: any) => decodeCallbackData(candidate.callback_data)?.action === action);
            await deliver(clickUpdate({ message_id: asked.result.message_id, chat_id: chatId, text: asked.params.text }, button.callback_data));
          },
        };
      },
      failureShown: async () => (await waitForText(h.telegram, chatId, APOLOGY_TEXT, 10_000)).params.text,
      shown,
    };
  };

  return {
    name: 'telegram',
    provider: h.provider,
    tools: h.tools,
    api: h.api,
    adminToken: h.adminToken,
    conversation,
    stop: async () => {
      await h.service.stop();
      await h.telegram.stop();
    },
  };
}
