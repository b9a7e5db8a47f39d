import type { TurnJob } from '../core/turns';
import type { HubMetrics } from '../metrics/hub-metrics';

export type TurnOutcomeLabel = 'done' | 'failed' | 'cancelled' | 'refused';

/**
 * One turn's timeline in the worker, for the stage metrics (src/metrics/stages.ts): when it was
 * taken, routed and said its first token. The queue's wait compares wall clocks (the job was queued
 * by another process); the rest are `performance.now()` marks of this process (sub-millisecond).
 * With metrics off the worker makes none.
 */
export class TurnObserver {
  private readonly takenAt = Date.now();
  private readonly takenMark = performance.now();
  private routedAt: number | null = null;
  private firstTokenAt: number | null = null;
  channel = 'unknown';
  workflow: string | null = null;

  constructor(
    private readonly metrics: HubMetrics,
    private readonly job: TurnJob,
  ) {}

  /** The session is read: its channel labels the turn. The queue's wait is known now. */
  loaded(channel: string): void {
    this.channel = channel;
    if (this.job.queuedAt !== undefined) this.metrics.stage('queued', channel, (this.takenAt - this.job.queuedAt) / 1000);
  }

  /** The workflow is chosen (null: the config default); the turn counts as started. */
  routed(workflow: string | null): void {
    this.routedAt = performance.now();
    this.workflow = workflow;
    this.metrics.stage('routed', this.channel, (this.routedAt - this.takenMark) / 1000);
    this.metrics.turnStarted(this.channel, workflow);
  }

  /** The turn's first `token` event was emitted. */
  firstToken(): void {
    if (this.firstTokenAt !== null) return;
    this.firstTokenAt = performance.now();
    if (this.routedAt !== null) this.metrics.stage('first_token', this.channel, (this.firstTokenAt - this.routedAt) / 1000);
  }

  ended(outcome: TurnOutcomeLabel, model: string, usage: { inputTokens: number; outputTokens: number }): void {
    const now = performance.now();
    if (outcome === 'done' && this.firstTokenAt !== null) this.metrics.stage('finished', this.channel, (now - this.firstTokenAt) / 1000);
    this.metrics.turnEnded(this.channel, this.workflow, outcome, (now - this.takenMark) / 1000);
    this.metrics.modelTokens(model, usage);
  }
}
