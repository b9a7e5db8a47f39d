import { SLACK_LIMITS } from './limits';
import type { SlackCalls } from './slack-outbox';

/** The prompts offered when someone opens an assistant thread (`channels.slack.suggested_prompts`). */
export interface SuggestedPrompts {
  title: string;
  prompts: Array<{ title: string; message: string }>;
}

/** The fields of Slack's `assistant_thread_started` event this channel reads. */
export interface AssistantThreadStartedEvent {
  type: 'assistant_thread_started';
  assistant_thread: { user_id?: string; channel_id: string; thread_ts: string; context?: { team_id?: string } };
}

/**
 * Someone opened the bot's assistant thread (the AI app split view): offer the suggested prompts
 * (at most four, Slack's limit). None configured, or a workspace that refuses the method: nothing.
 */
export async function offerPrompts(calls: SlackCalls, event: AssistantThreadStartedEvent, suggested: SuggestedPrompts): Promise<boolean> {
  const prompts = suggested.prompts.slice(0, SLACK_LIMITS.maxSuggestedPrompts);
  if (prompts.length === 0) return false;
  const { channel_id, thread_ts } = event.assistant_thread;
  return calls.extra('prompts', 'assistant.threads.setSuggestedPrompts', { channel_id, thread_ts, title: suggested.title, prompts });
}
