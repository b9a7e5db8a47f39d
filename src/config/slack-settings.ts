import type { Config } from './schema';
import { ConfigError } from './load';

/** What the Slack adapter needs from the configuration (secrets included: never log this object). */
export interface SlackSettings {
  mode: 'events' | 'socket';
  botToken: string;
  signingSecret: string | null;
  appToken: string | null;
  apiUrl: string;
  editIntervalMs: number;
  /** The shape of adapters/shared/send-budget.ts' SendBudgetLimits (config imports no adapter). */
  sendBudget: { perChat: { limit: number; windowMs: number }; global: { limit: number; windowMs: number } };
  nativeStreaming: boolean;
  threadStatus: boolean;
  suggestedPrompts: { title: string; prompts: Array<{ title: string; message: string }> };
}

/**
 * The Slack channel's settings, or null when it is off. It is on when its bot token is set or
 * `channels.slack.enabled`; then startup refuses what cannot work, naming the missing key.
 */
export function slackSettings(config: Readonly<Config>): SlackSettings | null {
  const slack = config.channels.slack;
  if (!slack.enabled && !slack.bot_token) return null;
  if (!slack.bot_token) throw new ConfigError('SERVICE_SLACK_BOT_TOKEN: is required when channels.slack.enabled is true');
  if (slack.mode === 'events' && !slack.signing_secret) {
    throw new ConfigError('SERVICE_SLACK_SIGNING_SECRET: is required for the Slack Events API (SERVICE_SLACK_MODE=events, the default); or use SERVICE_SLACK_MODE=socket with SERVICE_SLACK_APP_TOKEN');
  }
  if (slack.mode === 'socket' && !slack.app_token) {
    throw new ConfigError('SERVICE_SLACK_APP_TOKEN: is required for Slack Socket Mode (SERVICE_SLACK_MODE=socket); or use SERVICE_SLACK_MODE=events with SERVICE_SLACK_SIGNING_SECRET');
  }
  return {
    mode: slack.mode,
    botToken: slack.bot_token,
    signingSecret: slack.signing_secret,
    appToken: slack.app_token,
    // The Web API client appends method names: the base must end with a slash.
    apiUrl: slack.api_url.endsWith('/') ? slack.api_url : `${slack.api_url}/`,
    editIntervalMs: slack.edit_interval_ms,
    sendBudget: {
      perChat: { limit: slack.send_budget.per_channel.limit, windowMs: slack.send_budget.per_channel.window_ms },
      global: { limit: slack.send_budget.overall.limit, windowMs: slack.send_budget.overall.window_ms },
    },
    nativeStreaming: slack.native_streaming,
    threadStatus: slack.thread_status,
    suggestedPrompts: slack.suggested_prompts,
  };
}
