import type { Logger } from '../logs/logger';

/**
 * Logs store failures at most once per interval (spec, Limits rule 8: fail open with a warning).
 * With a dead store every request fails; one line per request would flood the log exactly when
 * someone needs to read it, so the line says how many failures it stands for instead.
 */
export class StoreFailureLog {
  private lastWarnedAt: number | undefined;
  private suppressed = 0;
  private failing = false;

  constructor(
    private readonly logger: Logger,
    private readonly intervalMs: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  failure(error: unknown): void {
    this.failing = true;
    const now = this.now();
    if (this.lastWarnedAt !== undefined && now - this.lastWarnedAt < this.intervalMs) {
      this.suppressed += 1;
      return;
    }
    this.logger.warn(
      { err: error instanceof Error ? error.message : String(error), suppressed_since_last_warning: this.suppressed },
      'rate-limit store unavailable: requests pass without rate limiting (fail open)',
    );
    this.lastWarnedAt = now;
    this.suppressed = 0;
  }

  success(): void {
    if (!this.failing) return;
    this.failing = false;
    this.logger.info('rate-limit store is reachable again: rate limiting resumed');
  }
}
