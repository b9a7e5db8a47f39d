import type { ChannelAdapter } from '../core/channel';
import type { Hub } from '../core/hub';
import type { Logger } from '../logs/logger';
import type { ChannelStatusBoard } from './channel-status';

/**
 * How a chat channel that fails is retried (decisions.md, "A channel that fails"): the first retry
 * after `firstDelayMs`, each next wait `factor` times longer, never longer than `maxDelayMs`, for as
 * long as it keeps failing.
 */
export const CHANNEL_RETRY = {
  firstDelayMs: 2_000,
  factor: 2,
  maxDelayMs: 5 * 60_000,
  /** Startup waits this long at most for a channel's first attempt (a dead network can hang it); the attempt goes on. */
  startupWaitMs: 10_000,
} as const;

/** The wait before retry number `failures` (1 = the first retry). */
export function retryDelayMs(failures: number): number {
  return Math.min(CHANNEL_RETRY.firstDelayMs * CHANNEL_RETRY.factor ** Math.max(0, failures - 1), CHANNEL_RETRY.maxDelayMs);
}

/**
 * Runs one channel under the rule that a channel never takes the hub down: a start that throws, or
 * a failure the adapter reports later, marks the channel failed (logged with the platform's reason)
 * and schedules another start with backoff, while the rest of the hub serves. A `required` channel
 * (the web channel, the hub's own API) is the exception: its first start failing fails startup.
 */
export class ChannelSupervisor {
  private failures = 0;
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  /** Bumped on every start attempt, so a failure reported by an earlier run is ignored. */
  private run = 0;

  constructor(
    private readonly adapter: ChannelAdapter,
    private readonly mode: string,
    private readonly hub: Hub,
    private readonly board: ChannelStatusBoard,
    private readonly logger: Logger,
    private readonly required = false,
  ) {}

  get name(): string {
    return this.adapter.name;
  }

  /** The first attempt: resolves once it settled (or after `startupWaitMs`); throws only for a required channel. */
  async start(): Promise<void> {
    if (this.required) return this.attempt(true);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.attempt(), new Promise<void>((resolve) => (timer = setTimeout(resolve, CHANNEL_RETRY.startupWaitMs)))]);
    clearTimeout(timer);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.adapter.stop();
  }

  private async attempt(rethrow = false): Promise<void> {
    const run = ++this.run;
    const reporter = { failed: (reason: string) => void this.failedWhileRunning(run, reason) };
    try {
      await this.adapter.start(this.board.observedHub(this.adapter.name, this.hub), reporter);
    } catch (error) {
      if (rethrow) throw error;
      if (!this.stopped) this.failed(reasonOf(error));
      return;
    }
    // Stopped while the attempt ran: what it started must not outlive the shutdown.
    if (this.stopped) return void (await this.adapter.stop().catch(() => undefined));
    this.failures = 0;
    this.board.running(this.adapter.name);
    this.logger.info({ channel: this.adapter.name, mode: this.mode }, `${this.adapter.name} channel started (mode=${this.mode})`);
  }

  private async failedWhileRunning(run: number, reason: string): Promise<void> {
    if (run !== this.run || this.stopped) return;
    this.run += 1;
    try {
      await this.adapter.stop();
    } catch (error) {
      this.logger.warn({ channel: this.adapter.name, error: reasonOf(error) }, 'a failed channel did not stop cleanly');
    }
    if (!this.stopped) this.failed(reason);
  }

  private failed(reason: string): void {
    this.failures += 1;
    const delay = retryDelayMs(this.failures);
    this.board.failed(this.adapter.name, reason, new Date(Date.now() + delay));
    this.logger.error(
      { channel: this.adapter.name, mode: this.mode, error: reason, failures: this.failures, retry_in_s: delay / 1000 },
      `${this.adapter.name} channel failed: ${reason}; retrying in ${delay / 1000} s (the rest of the hub keeps serving)`,
    );
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.attempt();
    }, delay);
    this.timer.unref();
  }
}

/** Adapters throw errors whose message is the platform's reason, already free of tokens. */
function reasonOf(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.split('\n')[0]!.slice(0, 300);
}
