import { decodeCallbackData } from '../../../adapters/telegram/callback-data';
import { chatSurface, type TelegramCalls } from '../../../adapters/telegram/chat-surface';
import { TELEGRAM_DEFAULTS } from '../../../adapters/telegram/config';
import type { SurfaceHarness } from './reply-surface-contract';

type Keyboard = { inline_keyboard: { callback_data: string }[][] };

/**
 * Telegram's reply surface over a recording of the Bot API calls it makes (the TelegramCalls port
 * TelegramSender implements): messages as the chat shows them (drafts vanish), typing. `group`: a
 * group chat, streamed by edits; otherwise a private chat, streamed as drafts.
 */
export function telegramSurfaces(group: boolean): SurfaceHarness {
  return {
    name: group ? 'telegram (group: edits)' : 'telegram (private chat: drafts)',
    conversation() {
      const messages: { id: number; text: string; keyboard?: Keyboard }[] = [];
      let typed = false;
      let next = 100;
      const send = async (_chat: unknown, text: string, extra?: { reply_markup?: unknown }) => {
        const message = { id: next++, text, keyboard: extra?.reply_markup as Keyboard | undefined };
        messages.push(message);
        return { message_id: message.id } as Awaited<ReturnType<TelegramCalls['send']>>;
      };
      const edit = async (id: number, text: string) => void (messages.find((message) => message.id === id)!.text = text);
      const sender: TelegramCalls = {
        draftsRefused: null,
        send,
        edit: async (_chat, id, text) => edit(id, text),
        interimSend: async (chat, text, extra) => (await send(chat, text, extra)).message_id,
        interimEdit: async (_chat, id, text) => (await edit(id, text), 'shown'),
        sendDraft: async () => 'shown',
        react: async () => undefined,
      };
      const typing = { hold: () => ((typed = true), async () => undefined) };
      const surface = chatSurface({
        sender,
        typing,
        chat: { id: group ? -5 : 5, group },
        replyTo: 1,
        draftId: group ? null : 1,
        interimIntervalMs: 20,
        draftKeepAliveMs: TELEGRAM_DEFAULTS.draftKeepAliveMs,
        maxMessageChars: TELEGRAM_DEFAULTS.maxMessageChars,
      });
      return {
        surface,
        shown: () => messages.map((message) => message.text),
        offered: () => {
          const keyboard = [...messages].reverse().find((message) => message.keyboard)?.keyboard;
          return keyboard ? keyboard.inline_keyboard.flat().map((button) => decodeCallbackData(button.callback_data)?.action ?? '?') : null;
        },
        showedWork: () => typed,
      };
    },
  };
}
