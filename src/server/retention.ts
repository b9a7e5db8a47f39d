import type { Logger } from '../logs/logger';

/** How often (every API process) rows older than their retention are deleted. */
export const RETENTION_PRUNE_INTERVAL_MS = 60 * 60 * 1000;

/** A table with a retention: deletes rows older than `days` and says how many went. */
export interface Prunable {
  prune(days: number): Promise<number>;
}

/**
 * Keeps a table within its retention (`audit.retention_days`, `usage.retention_days`): once at
 * start, then hourly (every API process; deleting twice is harmless). Returns how to stop it;
 * `days` 0 keeps everything (nothing runs).
 */
export function keepRowsWithin(what: 'audit' | 'usage', rows: Prunable, days: number, logger: Logger): () => void {
  if (days <= 0) return () => undefined;
  const prune = () =>
    void rows
      .prune(days)
      .then((deleted) => deleted > 0 && logger.info({ deleted, retention_days: days }, `old ${what} rows deleted`))
      .catch((error: unknown) => logger.warn({ err: error }, `could not delete old ${what} rows`));
  prune();
  const timer = setInterval(prune, RETENTION_PRUNE_INTERVAL_MS);
  timer.unref();
  return () => clearInterval(timer);
}
