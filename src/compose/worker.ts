/**
 * The worker's wiring, in one place: the embedded worker of an API process and the worker-only
 * process both start it here.
 */

import type { LlmProvider } from '../agent/provider';
import { createProvider } from '../agent/providers';
import { ConfigError } from '../config';
import { WORKER_PRESENCE_DEFAULTS } from '../events/worker-presence';
import { observedProvider } from '../worker/observed-provider';
import { TurnWorker } from '../worker/turn-worker';
import { startCore } from './core';
import type { Core, RunningService, ServiceOptions } from './service-types';
import { stopAll } from './shutdown';

/** Starts consuming turns in this process, after queueing again any turn a dead process left unfinished. */
export async function startWorker(core: Core, provider: LlmProvider): Promise<void> {
  const worker = new TurnWorker({
    store: core.store,
    presence: core.drivers.presence,
    heartbeatMs: WORKER_PRESENCE_DEFAULTS.heartbeatMs,
    queue: core.drivers.queue,
    control: core.drivers.control,
    provider: observedProvider(provider, core.metrics, core.tracing),
    metrics: core.metrics,
    tracing: core.tracing,
    audit: core.audit,
    approvals: core.approvals,
    budgets: core.budgets.enabled ? core.budgets : null,
    sessionTools: core.sessionTools,
    logger: core.logger,
    concurrency: core.config.worker.concurrency,
    agent: core.config.agent,
    contextWindow: core.config.llm.context_window,
    routing: core.routing,
    turns: core.turns.lifecycle,
    midTurnDefault: core.midTurnDefault,
    // The workflow's collections searched for the turn's message, as a system-prompt block.
    knowledge: core.knowledge,
  });
  await worker.start();
  core.lifecycle.onStop({ name: 'worker', stop: () => worker.stop() });
  const requeued = await core.turns.requeueUnfinished();
  if (requeued > 0) core.logger.info({ turns: requeued }, 'queued unfinished turns again');
}

/** The worker-only process (`npm run worker`): runs turns from Redis, serves nothing. */
export async function startWorkerProcess(options: ServiceOptions): Promise<RunningService> {
  const core = await startCore(options, 'worker');
  let provider: LlmProvider;
  try {
    provider = options.provider ?? createProvider(core.config.llm);
  } catch (error) {
    await core.lifecycle.shutdown(() => undefined);
    throw error;
  }
  if (!core.config.redis.url) {
    await core.lifecycle.shutdown(() => undefined);
    throw new ConfigError('SERVICE_REDIS_URL: is required for `npm run worker` (a separate worker takes turns from Redis)');
  }
  await startWorker(core, provider);
  core.logger.info({ queue: core.drivers.description, storage: core.database.description }, 'Switchboard worker is ready');
  const storage = { store: core.store, sequelize: core.database.sequelize };
  return {
    config: core.config,
    hub: null,
    socketAuth: null,
    logger: core.logger,
    port: 0,
    url: '',
    lifecycle: core.lifecycle,
    storage,
    metricsPort: core.metricsPort,
    stop: () => stopAll(core.lifecycle, core.logger),
  };
}
