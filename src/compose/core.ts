import path from 'node:path';
import { CHANNELS } from '../../adapters';
import { createToolRegistry } from '../agent/tools';
import { ApprovalService } from '../approvals/approval-service';
import { ApprovalStore } from '../approvals/approval-store';
import { hubUserLookup } from '../approvals/hub-users';
import { PlatformIdentities } from '../approvals/platform-identities';
import { AuditLog } from '../audit/audit-log';
import { usernameOf } from '../auth/username-lookup';
import { loadConfig, type Config } from '../config';
import { openDatabase, type Database } from '../db/database';
import { migrateToLatest } from '../db/migrator';
import { initModels, type Models } from '../db/models';
import { openTurnStore } from '../db/open-turn-store';
import type { TurnStore } from '../db/turn-store';
import { createKnowledge } from '../knowledge';
import { LogHub } from '../logs/log-hub';
import { createLogger, type Logger } from '../logs/logger';
import { secretHeaderPaths } from '../logs/redact';
import { TurnArrivals } from '../metrics/turn-arrivals';
import { RoutingService } from '../routing/routing-service';
import { Lifecycle } from '../server/lifecycle';
import type { ReadinessCheck } from '../server/readiness';
import { channelMidTurnDefaults } from '../sessions/mid-turn-policy';
import { PickupWatch, pickupTimings } from '../turns/pickup-watch';
import { SessionTools } from '../sessions/session-tools';
import { TurnService } from '../turns/turn-service';
import { activeTraceFields } from '../tracing/tracing';
import { DailyBudgets } from '../usage/budgets';
import { withEventsMidTurn } from '../triggers/events';
import { createDrivers } from './drivers';
import { startMcp } from './mcp';
import { startObservability } from './observability';
import type { Core, Drivers, ServiceOptions } from './service-types';

type ProcessName = 'api' | 'worker';

/** The first parts of a process: its configuration, logs and the list of what to stop. */
interface Foundation {
  channels: Core['channels'];
  config: Readonly<Config>;
  configFile: string | null;
  logHub: LogHub;
  logger: Logger;
  lifecycle: Lifecycle;
  readiness: ReadinessCheck[];
}

/** What every process needs: config, logs, database (migrated), models and the turn drivers. */
export async function startCore(options: ServiceOptions, processName: ProcessName): Promise<Core> {
  const foundation = openFoundation(options, processName);
  const { config, logger, lifecycle, readiness } = foundation;
  try {
    const { database, models, store } = await openStorage(config, logger, lifecycle, readiness);
    const drivers = await createDrivers(config, logger, lifecycle, readiness, foundation.logHub);
    const { routing, pickup, turns } = await startTurnServices(foundation, models, store, drivers);
    const knowledge = createKnowledge(database, models);
    const workspaceDir = path.resolve(options.cwd ?? process.cwd(), config.data_dir, 'workspace');
    const builtins = options.tools ?? createToolRegistry(config.tools, { workspaceDir, knowledge });
    const { mcp, tools, watch } = startMcp(config, logger, lifecycle, database, builtins, options.cwd ?? process.cwd());
    const observability = await startObservability(config, logger, lifecycle, processName, tools, drivers.queue, (name) => mcp.get(name) !== undefined);
    Object.assign(watch, { metrics: observability.metrics, tracing: observability.tracing });
    // Stopped before the database closes (the lifecycle stops in reverse): what is queued is written.
    const audit = new AuditLog(models, logger);
    lifecycle.onStop({ name: 'audit log', stop: () => audit.close() });
    const identities = new PlatformIdentities(database.sequelize);
    const budgets = new DailyBudgets(config.usage.budgets, {
      workflowIdByName: (name) => routing.workflowIdByName(name),
      usernameOf: (userId) => usernameOf(database.sequelize, userId),
    });
    return {
      ...foundation,
      ...observability,
      database,
      models,
      store,
      drivers,
      routing,
      pickup,
      turns,
      knowledge,
      tools,
      mcp,
      sessionTools: new SessionTools(tools),
      // Events arriving while their thread's turn runs wait for it (the `events` channel's default).
      midTurnDefault: withEventsMidTurn(channelMidTurnDefaults(config.channels)),
      arrivals: new TurnArrivals(),
      audit,
      budgets,
      identities,
      approvals: new ApprovalService({
        store: new ApprovalStore(models),
        control: drivers.control,
        audit,
        users: hubUserLookup(database.sequelize),
        identities: identities.lookup,
      }),
    };
  } catch (error) {
    await lifecycle.shutdown(() => undefined);
    throw error;
  }
}

/** Configuration (validated once), the logger (secret headers redacted, trace ids when traced) and the lifecycle. */
function openFoundation(options: ServiceOptions, processName: ProcessName): Foundation {
  const channels = options.channels ?? CHANNELS;
  const { config, configFile, warnings } = loadConfig({ env: options.env, cwd: options.cwd, channels });
  const logHub = new LogHub(processName);
  const redactPaths = secretHeaderPaths(channels.flatMap((channel) => channel.secretHeaders ?? []));
  // With traces on, every line written inside a turn names its trace (`trace_id`, `span_id`).
  const mixin = config.traces.otlp_url ? activeTraceFields : undefined;
  const logger = createLogger({ ...config.log, name: processName, destination: options.logDestination, extraStreams: [logHub], redactPaths, mixin });
  for (const warning of warnings) logger.warn(warning);
  const lifecycle = new Lifecycle();
  lifecycle.onStop({ name: 'log hub', stop: async () => logHub.close() });
  return { channels, config, configFile, logHub, logger, lifecycle, readiness: [] };
}

/** The database, migrated to the latest version, its models and the turn store. */
async function openStorage(
  config: Readonly<Config>,
  logger: Logger,
  lifecycle: Lifecycle,
  readiness: ReadinessCheck[],
): Promise<{ database: Database; models: Models; store: TurnStore }> {
  const database = await openDatabase(config, logger);
  lifecycle.onStop({ name: 'database', stop: () => database.close() });
  readiness.push({ name: 'database', check: async () => void (await database.sequelize.query('SELECT 1')) });
  const applied = await migrateToLatest(database, logger);
  if (applied.length > 0) logger.info({ migrations: applied }, 'database migrated');
  const models = initModels(database.sequelize);
  const store = await openTurnStore(database, config);
  lifecycle.onStop({ name: 'turn store', stop: () => store.close() });
  return { database, models, store };
}

/** The running router (kept in step with workflow changes), the pickup watch and the turn service. */
async function startTurnServices(foundation: Foundation, models: Models, store: TurnStore, drivers: Drivers) {
  const { config, logger, lifecycle, channels } = foundation;
  const routing = new RoutingService(models, channels);
  await routing.start(drivers.control);
  lifecycle.onStop({ name: 'routing', stop: async () => routing.stop() });
  const pickup = new PickupWatch(
    { registry: drivers.registry, events: drivers.events, workers: drivers.presence, logger },
    pickupTimings(config.worker.pickup_warning_s),
  );
  const turns = new TurnService({
    store,
    registry: drivers.registry,
    queue: drivers.queue,
    events: drivers.events,
    control: drivers.control,
    logger,
    hasWorkflow: (name) => routing.hasWorkflow(name),
    pickup,
  });
  return { routing, pickup, turns };
}
