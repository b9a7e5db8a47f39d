import type { AgentState } from '../../src/core/events';
import type { SlackCalls } from './slack-outbox';

/**
 * What the thread shows under the bot's name while the agent works (Slack prefixes the bot's name).
 * `writing` has none: the answer itself is showing then.
 */
export const STATUS_TEXT = {
  states: {
    thinking: 'is thinking…',
    analyzing: 'is analyzing…',
    researching: 'is researching…',
    deep_thinking: 'is thinking it through…',
    delegating: 'is delegating…',
  } as Partial<Record<AgentState, string>>,
  tool: (name: string) => `is running ${name}…`,
  confirm: (name: string) => `is waiting for your confirmation to run ${name}…`,
} as const;

/**
 * The assistant thread status (`assistant.threads.setStatus`) of one turn: set when the agent
 * thinks or runs a tool, re-sent on long turns (Slack drops it after two minutes without a
 * message), cleared (status "") at the end. Best effort: a workspace that refuses the method, or a
 * reply outside a thread, goes without it.
 */
export class ThreadStatus {
  private current = '';
  private shown = false;

  constructor(
    private readonly calls: SlackCalls,
    private readonly where: { channel: string; threadTs: string } | null,
  ) {}

  get active(): boolean {
    return this.where !== null && this.current !== '';
  }

  async set(status: string): Promise<void> {
    if (this.where === null || status === this.current) return;
    this.current = status;
    if (await this.send(status)) this.shown = true;
  }

  /** Re-sends the current status (a long turn), so Slack keeps showing it. */
  async refresh(): Promise<void> {
    if (this.active) await this.send(this.current);
  }

  /** Slack cleared the status by itself (the bot posted in the thread). */
  replied(): void {
    this.current = '';
  }

  async clear(): Promise<void> {
    this.current = '';
    if (!this.shown) return;
    this.shown = false;
    await this.send('');
  }

  private send(status: string): Promise<boolean> {
    return this.calls.extra('status', 'assistant.threads.setStatus', { channel_id: this.where!.channel, thread_ts: this.where!.threadTs, status });
  }
}
