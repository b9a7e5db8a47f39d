import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { startService, type RunningService } from '../../../src/main';
import { ScriptedProvider } from '../../fakes/scripted-provider';
import { FakeTelegramApi, type TelegramCall } from '../../fakes/telegram-api';
import { TestTools } from '../../fakes/test-tools';
import { GENEROUS_RATE_LIMITS } from '../../helpers/auth-service';
import { testEnv } from '../../helpers/env';
import { LogCapture } from '../../helpers/log-capture';
import { makeTempDir } from '../../helpers/temp-dir';
import { registerUser } from '../../helpers/users';

export const BOT_TOKEN = '123456:TEST-bot-token-never-logged';
export const WEBHOOK_SECRET = 'webhook-secret-never-logged';

/** The hub with the Telegram channel on, against a fake Bot API, a scripted model and fixture tools. */
export interface TelegramHarness {
  service: RunningService;
  telegram: FakeTelegramApi;
  provider: ScriptedProvider;
  tools: TestTools;
  logs: LogCapture;
  api: string;
  adminToken: string;
}

/** `channels.telegram` keys for the harness's config.yaml, beyond the mode. */
export interface HarnessOptions {
  editIntervalMs?: number;
  typingIntervalMs?: number;
  drafts?: boolean;
  /** `channels.telegram.send_limits`; default: Telegram's limits with windows ten times shorter. */
  sendLimits?: Record<string, number>;
  /** The config's `usage` section (daily budgets). */
  usage?: Record<string, unknown>;
}

/** Telegram's published limits, ten times faster: the same pacing, tests that do not wait seconds. */
export const FAST_SEND_LIMITS = { per_chat: 1, per_chat_window_ms: 100, per_group: 20, per_group_window_ms: 6000, global: 30, global_window_ms: 100 };

export async function startTelegramHarness(mode: 'webhook' | 'polling', options: HarnessOptions = {}): Promise<TelegramHarness> {
  const telegram = new FakeTelegramApi(BOT_TOKEN);
  await telegram.start();
  const cwd = makeTempDir();
  const telegramKeys = {
    mode,
    edit_interval_ms: options.editIntervalMs ?? 100,
    ...(options.typingIntervalMs === undefined ? {} : { typing_interval_ms: options.typingIntervalMs }),
    ...(options.drafts === undefined ? {} : { drafts: options.drafts }),
    send_limits: options.sendLimits ?? FAST_SEND_LIMITS,
  };
  const config = {
    agent: { default_tools: ['lookup', 'save_note'] },
    channels: { telegram: telegramKeys },
    ...(options.usage ? { usage: options.usage } : {}),
  };
  // JSON is YAML: the config file is written as JSON.
  writeFileSync(path.join(cwd, 'config.yaml'), JSON.stringify(config, null, 2));
  const provider = new ScriptedProvider();
  const tools = new TestTools();
  const logs = new LogCapture();
  const env = testEnv(path.join(cwd, 'data'), {
    ...GENEROUS_RATE_LIMITS,
    SERVICE_TELEGRAM_BOT_TOKEN: BOT_TOKEN,
    SERVICE_TELEGRAM_API_ROOT: telegram.apiRoot,
    ...(mode === 'webhook' ? { SERVICE_TELEGRAM_WEBHOOK_SECRET: WEBHOOK_SECRET } : {}),
  });
  const service = await startService({ env, cwd, logDestination: logs, provider, tools });
  const api = `http://127.0.0.1:${service.port}/api/v1`;
  const { token } = await registerUser(api, 'root');
  return { service, telegram, provider, tools, logs, api, adminToken: token };
}

let nextUpdateId = 1;
let nextMessageId = 1;

/** A text message update from user 77 (Ada, unless `from` says who) in `chatId` (negative ids are groups, as on Telegram). */
export function textUpdate(chatId: number, text: string, updateId = nextUpdateId++, from: Record<string, unknown> = {}): Record<string, any> {
  return {
    update_id: updateId,
    message: {
      message_id: nextMessageId++,
      date: Math.floor(Date.now() / 1000),
      chat: chatId < 0 ? { id: chatId, type: 'group', title: 'Team' } : { id: chatId, type: 'private', first_name: 'Ada' },
      from: { id: 77, is_bot: false, first_name: 'Ada', last_name: 'Lovelace', username: 'ada', ...from },
      text,
    },
  };
}

/** A click on an inline button of the bot's message `message`. */
export function clickUpdate(message: { message_id: number; chat_id: number; text: string }, data: string): Record<string, any> {
  return {
    update_id: nextUpdateId++,
    callback_query: {
      id: `query-${nextUpdateId}`,
      chat_instance: 'instance',
      from: { id: 77, is_bot: false, first_name: 'Ada' },
      message: { message_id: message.message_id, date: 0, chat: { id: message.chat_id, type: 'private', first_name: 'Ada' }, text: message.text },
      data,
    },
  };
}

export const forChat = (chatId: number) => (call: TelegramCall) => Number(call.params.chat_id) === chatId;

/** The text the chat shows last for the bot's reply: the latest sendMessage/editMessageText text. */
export function lastText(telegram: FakeTelegramApi, chatId: number): string | undefined {
  return telegram.calls.filter((call) => ['sendMessage', 'editMessageText'].includes(call.method) && call.status === 200 && forChat(chatId)(call)).at(-1)
    ?.params.text;
}

/** Resolves once the chat shows `text` as a message: sent, or an edit that Telegram took. */
export function waitForText(telegram: FakeTelegramApi, chatId: number, text: string | RegExp, timeoutMs = 5000): Promise<TelegramCall> {
  const matches = (value: unknown) => (typeof text === 'string' ? value === text : typeof value === 'string' && text.test(value));
  return telegram.waitFor(
    (call) => forChat(chatId)(call) && ['sendMessage', 'editMessageText'].includes(call.method) && call.status === 200 && matches(call.params.text),
    timeoutMs,
  );
}
