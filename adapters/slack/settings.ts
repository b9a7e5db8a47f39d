import type { Logger } from 'pino';
import { z } from 'zod';
import type { ChannelEnvBinding } from '../../src/core/channel';
import { midTurnSetting, sendBudgetLimits, sendWindowSetting } from '../shared/settings';
import type { SlackAdapterConfig } from './slack-adapter';

/**
 * `channels.slack` in config.yaml (documented there, key by key). Off until a bot token is set or
 * `enabled: true`; then startup refuses what cannot work, naming the missing setting.
 */
export const slackSettingsSchema = z
  .strictObject({
    enabled: z.boolean().default(false),
    mid_turn: midTurnSetting,
    /** Secrets: SERVICE_SLACK_BOT_TOKEN, SERVICE_SLACK_SIGNING_SECRET, SERVICE_SLACK_APP_TOKEN. */
    bot_token: z.string().min(1).nullable().default(null),
    signing_secret: z.string().min(1).nullable().default(null),
    app_token: z.string().min(1).nullable().default(null),
    api_url: z.url().default('https://slack.com/api/'),
    /** `events`: Events API over HTTP (needs the signing secret); `socket`: Socket Mode (needs the app token, no public URL). */
    mode: z.enum(['events', 'socket']).default('events'),
    /** Streamed replies are edited (or appended to) at most this often (Slack tolerates about one chat.update per second). */
    edit_interval_ms: z.number().int().min(200).max(60_000).default(1000),
    /** Replies in threads stream natively (chat.startStream/appendStream/stopStream); edits where Slack refuses. */
    native_streaming: z.boolean().default(true),
    /** The assistant thread status ("is thinking…", "is running <tool>…") while a turn runs. */
    thread_status: z.boolean().default(true),
    /** One budget for every message the channel sends, shared by all turns (adapters/shared/send-budget.ts). */
    send_budget: z
      .strictObject({
        per_channel: sendWindowSetting(3, 3_000),
        overall: sendWindowSetting(100, 60_000),
      })
      .prefault({}),
    /** Offered when someone opens the bot's assistant thread; an empty list offers none. */
    suggested_prompts: z
      .strictObject({
        title: z.string().min(1).max(150).default('Try asking'),
        prompts: z
          .array(z.strictObject({ title: z.string().min(1).max(75), message: z.string().min(1).max(4_000) }))
          .max(4)
          .default([
            { title: 'What can you do?', message: '/help' },
            { title: 'Which tools can you use?', message: '/tools' },
            { title: 'How is this session set up?', message: '/info' },
          ]),
      })
      .prefault({}),
  })
  .superRefine((slack, context) => {
    if (!slackEnabled(slack)) return;
    // Issues are reported on the secret's key: the message then names its environment variable.
    if (!slack.bot_token) {
      context.addIssue({ code: 'custom', path: ['bot_token'], message: 'is required when channels.slack.enabled is true' });
    } else if (slack.mode === 'events' && !slack.signing_secret) {
      context.addIssue({
        code: 'custom',
        path: ['signing_secret'],
        message: 'is required for the Slack Events API (SERVICE_SLACK_MODE=events, the default); or use SERVICE_SLACK_MODE=socket with SERVICE_SLACK_APP_TOKEN',
      });
    } else if (slack.mode === 'socket' && !slack.app_token) {
      context.addIssue({
        code: 'custom',
        path: ['app_token'],
        message: 'is required for Slack Socket Mode (SERVICE_SLACK_MODE=socket); or use SERVICE_SLACK_MODE=events with SERVICE_SLACK_SIGNING_SECRET',
      });
    }
  });

/** The validated `channels.slack` section (secrets included: never log it). */
export type SlackSettings = z.infer<typeof slackSettingsSchema>;

/** The `SERVICE_SLACK_*` variables (secrets only from the environment). */
export const SLACK_ENV: readonly ChannelEnvBinding[] = [
  { env: 'SERVICE_SLACK_BOT_TOKEN', key: 'bot_token', kind: 'nullable-string', secret: true },
  { env: 'SERVICE_SLACK_SIGNING_SECRET', key: 'signing_secret', kind: 'nullable-string', secret: true },
  { env: 'SERVICE_SLACK_APP_TOKEN', key: 'app_token', kind: 'nullable-string', secret: true },
  { env: 'SERVICE_SLACK_API_URL', key: 'api_url', kind: 'string' },
  { env: 'SERVICE_SLACK_MODE', key: 'mode', kind: 'string' },
];

/** On when its bot token is set or `channels.slack.enabled`. */
export function slackEnabled(slack: Pick<SlackSettings, 'enabled' | 'bot_token'>): boolean {
  return slack.enabled || slack.bot_token !== null;
}

/** The adapter's configuration from a validated (and enabled) section. */
export function slackAdapterConfig(slack: SlackSettings, logger: Logger): SlackAdapterConfig {
  return {
    logger,
    mode: slack.mode,
    botToken: slack.bot_token ?? '',
    signingSecret: slack.signing_secret,
    appToken: slack.app_token,
    // The Web API client appends method names: the base must end with a slash.
    apiUrl: slack.api_url.endsWith('/') ? slack.api_url : `${slack.api_url}/`,
    editIntervalMs: slack.edit_interval_ms,
    sendBudget: sendBudgetLimits(slack.send_budget.per_channel, slack.send_budget.overall),
    nativeStreaming: slack.native_streaming,
    threadStatus: slack.thread_status,
    suggestedPrompts: slack.suggested_prompts,
  };
}
