import type { Logger } from '../logs/logger';
import type { AuditService } from './audit-service';

/** How often (every API process) audit rows older than `audit.retention_days` are deleted. */
export const AUDIT_PRUNE_INTERVAL_MS = 60 * 60 * 1000;

/**
 * Keeps the audit trail within its retention: once at start, then hourly (every API process;
 * deleting twice is harmless). Returns how to stop it; `days` 0 keeps everything (nothing runs).
 */
export function keepAuditWithin(audit: AuditService, days: number, logger: Logger): () => void {
  if (days <= 0) return () => undefined;
  const prune = () =>
    void audit
      .prune(days)
      .then((deleted) => deleted > 0 && logger.info({ deleted, retention_days: days }, 'old audit rows deleted'))
      .catch((error: unknown) => logger.warn({ err: error }, 'could not delete old audit rows'));
  prune();
  const timer = setInterval(prune, AUDIT_PRUNE_INTERVAL_MS);
  timer.unref();
  return () => clearInterval(timer);
}
