import type { WorkerPresence } from '../core/turns';

/** A dependency the service needs to answer requests (database, Redis). */
export interface ReadinessCheck {
  name: string;
  check(): Promise<void>;
}

/** How long one readiness check may take before it counts as failed. */
export const READINESS_CHECK_TIMEOUT_MS = 2_000;

export interface CheckResult {
  status: 'ok' | 'failed';
  latency_ms: number;
  error?: string;
}

export async function runChecks(checks: readonly ReadinessCheck[]): Promise<Record<string, CheckResult>> {
  const entries = await Promise.all(
    checks.map(async (check): Promise<[string, CheckResult]> => {
      const started = performance.now();
      let timer: NodeJS.Timeout | undefined;
      try {
        await Promise.race([
          check.check(),
          new Promise((_, reject) => {
            timer = setTimeout(() => reject(new Error(`timed out after ${READINESS_CHECK_TIMEOUT_MS} ms`)), READINESS_CHECK_TIMEOUT_MS);
          }),
        ]);
        return [check.name, { status: 'ok', latency_ms: Math.round(performance.now() - started) }];
      } catch (error) {
        // Only the error's class and first line: connection errors can echo hosts, never credentials here.
        const reason = error instanceof Error ? error.message.split('\n')[0]! : 'failed';
        return [check.name, { status: 'failed', latency_ms: Math.round(performance.now() - started), error: reason }];
      } finally {
        clearTimeout(timer);
      }
    }),
  );
  return Object.fromEntries(entries);
}

/** An API process whose turns no worker runs is not ready (decisions.md: readiness). */
export function workersReadiness(presence: Pick<WorkerPresence, 'alive'>): ReadinessCheck {
  return {
    name: 'workers',
    check: async () => {
      if ((await presence.alive()) === 0) throw new Error('no worker has sent a heartbeat lately: start one with `npm run worker`');
    },
  };
}
