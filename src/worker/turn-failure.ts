import { ProviderError } from '../agent/provider';
import type { TurnJob } from '../core/turns';
import type { Logger } from '../logs/logger';
import type { HubMetrics } from '../metrics/hub-metrics';
import { activeSpanFailed } from '../tracing/tracing';
import type { FailureCode } from '../turns/turn-endings';
import { BudgetExceeded } from '../usage/budgets';

/** Why a turn failed, as its `error` frame says it. */
export interface Failure {
  code: FailureCode;
  message: string;
}

/** The `error` frame for a failed turn: provider failures by name, a used-up budget as it is, anything else generic. */
export function describeFailure(error: unknown): Failure {
  if (error instanceof BudgetExceeded) return { code: 'BUDGET_EXCEEDED', message: error.message };
  if (error instanceof ProviderError) {
    return error.kind === 'unreachable'
      ? { code: 'PROVIDER_UNREACHABLE', message: `The model provider could not be reached: ${error.message}` }
      : { code: 'PROVIDER_ERROR', message: `The model provider failed: ${error.message}` };
  }
  return { code: 'INTERNAL_ERROR', message: 'The agent failed: an internal error occurred.' };
}

/**
 * A failed turn in the logs, the metrics and its trace: a refused budget is routine (info, and its
 * refusal counted), a provider's failure a warning, anything else an error with its stack.
 */
export function reportFailure(error: unknown, failure: Failure, job: TurnJob, deps: { logger: Logger; metrics?: HubMetrics | null; traced: boolean }): void {
  const { logger } = deps;
  if (error instanceof BudgetExceeded) {
    logger.info({ job, budget: error.scope }, 'turn refused: daily token budget used up');
    deps.metrics?.budgetRefusal(error.scope);
  } else if (failure.code === 'INTERNAL_ERROR') logger.error({ err: error, job }, 'turn failed');
  else logger.warn({ err: error instanceof Error ? error.message : String(error), job }, 'turn failed at the provider');
  if (deps.traced) activeSpanFailed(failure.code, failure.message);
}
