/**
 * Composition root: reads the configuration, opens storage, picks the queue and event drivers,
 * builds the app, the channels and the worker, and serves. The only file that knows every concrete
 * implementation. `src/worker-main.ts` starts the worker-only process from here too.
 */
import type { IncomingMessage } from 'node:http';
import path from 'node:path';
import type { DestinationStream } from 'pino';
import { CHANNELS } from '../adapters';
import type { LlmProvider } from './agent/provider';
import { createProvider } from './agent/providers';
import type { ToolCatalog } from './agent/tool-box';
import { createToolRegistry } from './agent/tools';
import { SessionTools } from './sessions/session-tools';
import { API_PREFIX, createApp } from './api/app';
import type { ApiRouter } from './api/endpoint';
import { allowedOrigins } from './api/origins';
import { apiKeyRoutes } from './api/routes/api-keys';
import { authRoutes } from './api/routes/auth';
import { SAML_PATH, samlPreamble, samlRoutes } from './api/routes/saml';
import { registerSessionRoutes } from './api/routes/sessions';
import { channelMidTurnDefaults, sessionMidTurnPolicy, type ChannelPolicyDefault } from './sessions/mid-turn-policy';
import { registerToolRoutes } from './api/routes/tools';
import { registerWorkflowRoutes } from './api/routes/workflows';
import { routingTestRoutes } from './api/routes/routing-test';
import { RoutingService } from './routing/routing-service';
import { WorkflowService } from './workflows/workflow-service';
import { toolNames } from './workflows/workflow-schema';
import { SessionMemory } from './sessions/session-memory';
import { userRoutes } from './api/routes/users';
import { knowledgeRoutes } from './api/routes/knowledge';
import { channelRoutes } from './api/routes/channels';
import { configRoutes } from './api/routes/config';
import { createAuth } from './auth';
import { SamlService } from './auth/saml/service';
import { resolveSamlSettings } from './auth/saml/settings';
import { checkUpgradeCredential, selectProtocol } from './auth/websocket';
import { ConfigError, loadConfig, type Config } from './config';
import { DOTENV_FILE, environmentWithDotEnv } from './config/dotenv';
import type { ChannelAdapter, ChannelDescriptor } from './core/channel';
import type { ChannelTelemetry } from './core/telemetry';
import type { Hub } from './core/hub';
import type { Role } from './core/principal';
import type { ControlBus, EventLog, TurnQueue, TurnRegistry, WorkerPresence } from './core/turns';
import { openDatabase, type Database } from './db/database';
import { migrateToLatest } from './db/migrator';
import { initModels, type Models } from './db/models';
import { InProcessControlBus } from './events/in-process-control-bus';
import { InProcessEventLog } from './events/in-process-event-log';
import { InProcessTurnRegistry } from './events/in-process-turn-registry';
import { RedisControlBus } from './events/redis-control-bus';
import { RedisEventLog } from './events/redis-event-log';
import { RedisTurnRegistry } from './events/redis-turn-registry';
import { InProcessWorkerPresence, RedisWorkerPresence, WORKER_PRESENCE_DEFAULTS } from './events/worker-presence';
import { openTurnStore } from './db/open-turn-store';
import type { TurnStore } from './db/turn-store';
import { PickupWatch } from './sessions/pickup-watch';
import { SessionAccess } from './sessions/session-access';
import { LogHub } from './logs/log-hub';
import { LOG_STREAM_DEFAULTS, LogStreamSocket } from './logs/log-stream-socket';
import { createLogger, type Logger } from './logs/logger';
import { redactUrlCredentials, secretHeaderPaths } from './logs/redact';
import { createKnowledge, type KnowledgeService } from './knowledge';
import { KNOWLEDGE_DEFAULTS } from './knowledge/limits';
import { formatPassages } from './agent/passages';
import { InProcessTurnQueue } from './queue/in-process-turn-queue';
import { RedisTurnQueue } from './queue/redis-turn-queue';
import { createRedis } from './redis/connection';
import type { Redis } from 'ioredis';
import { renderBanner, type BannerFacts } from './server/banner';
import { listen } from './server/http-server';
import { createClientIpResolver, createRateLimiter, writeUpgradeRefusal } from './ratelimit';
import { Lifecycle } from './server/lifecycle';
import type { ReadinessCheck } from './server/readiness';
import { attachUpgradeRouter } from './server/upgrade-router';
import { SwitchboardHub } from './sessions/hub';
import { SessionService } from './sessions/session-service';
import { TurnService } from './sessions/turn-service';
import { VERSION } from './version';
import { TurnWorker } from './worker/turn-worker';
import { ChannelStatusBoard } from './server/channel-status';
import { ChannelSupervisor } from './server/channel-supervisor';
import { webUi } from './server/web-ui';
import { HubMetrics } from './metrics/hub-metrics';
import { metricsHandler } from './metrics/metrics-endpoint';
import { channelTelemetry } from './metrics/channel-telemetry';
import { TurnArrivals } from './metrics/turn-arrivals';
import { metricsApp } from './api/metrics-app';
import { activeTraceFields, Tracing } from './tracing/tracing';
import { observedProvider } from './worker/observed-provider';
import { AuditLog } from './audit/audit-log';
import { AuditService } from './audit/audit-service';
import { auditRoutes } from './api/routes/audit';
import { usageRoutes } from './api/routes/usage';
import { UsageService } from './usage/usage-service';
import { DailyBudgets } from './usage/budgets';
import { QueryTypes } from 'sequelize';

/** How often (at most) the API process looks for accepted turns no worker took (PickupWatch). */
const PICKUP_SWEEP_MS = 5_000;

/** Exit status for configuration errors (sysexits.h EX_CONFIG). */
export const EXIT_CONFIG = 78;

export interface ServiceOptions {
  env: Record<string, string | undefined>;
  cwd?: string;
  /** Tests capture log lines here. */
  logDestination?: DestinationStream;
  /** The model; default from `llm.provider` (tests pass a controllable one). */
  provider?: LlmProvider;
  /** The tools; default: the built-in registry from config. */
  tools?: ToolCatalog;
  /** The channels; default: the registry (adapters/index.ts). Tests add a channel of their own. */
  channels?: readonly ChannelDescriptor[];
}

export interface RunningService {
  config: Readonly<Config>;
  /** The hub port channels use (null in a worker-only process). */
  hub: Hub | null;
  logger: Logger;
  port: number;
  url: string;
  lifecycle: Lifecycle;
  /** The port of this process's own metrics listener (`metrics.port`), or null. */
  metricsPort: number | null;
  /** The database as this process uses it: tests and benchmarks count its statements. */
  storage: { store: TurnStore; sequelize: Database['sequelize'] };
  stop(): Promise<void>;
}

interface Drivers {
  queue: TurnQueue;
  events: EventLog;
  control: ControlBus;
  registry: TurnRegistry;
  presence: WorkerPresence;
  description: string;
}

/** In-process drivers without Redis (`npm start` needs nothing else); BullMQ + Streams + pub/sub with it. */
async function createDrivers(config: Readonly<Config>, logger: Logger, lifecycle: Lifecycle, readiness: ReadinessCheck[], logHub: LogHub): Promise<Drivers> {
  const stopTimeoutMs = config.server.shutdown_timeout_s * 1000;
  if (!config.redis.url) {
    const drivers = {
      queue: new InProcessTurnQueue(logger),
      events: new InProcessEventLog(),
      control: new InProcessControlBus(),
      registry: new InProcessTurnRegistry(),
      presence: new InProcessWorkerPresence(),
    };
    lifecycle.onStop({ name: 'event bus', stop: async () => void (await Promise.all([drivers.events.close(), drivers.control.close()])) });
    lifecycle.onStop({ name: 'turn queue', stop: () => drivers.queue.close() });
    return { ...drivers, description: 'in-process (embedded)' };
  }
  const url = config.redis.url;
  const prefix = config.redis.prefix;
  // Commands sent in one tick go in one write (a turn's token appends, registry updates).
  const commands = createRedis(url, logger, 'commands', { autoPipelining: true });
  const subscriber = createRedis(url, logger, 'subscriber', { blocking: true });
  const bullmq = createRedis(url, logger, 'bullmq', { blocking: true });
  await reachRedis(url, [commands, subscriber], [commands, subscriber, bullmq]);
  const events = new RedisEventLog(commands, subscriber, prefix);
  logHub.useRedis(commands, subscriber, prefix);
  const control = new RedisControlBus(commands, subscriber, prefix);
  const queue = new RedisTurnQueue(
    {
      connection: bullmq,
      prefix: `${prefix}:bull`,
      lockDurationMs: config.worker.turn_lock_s * 1000,
      stalledIntervalMs: config.worker.stalled_check_s * 1000,
      stopTimeoutMs,
    },
    logger,
  );
  lifecycle.onStop({
    name: 'redis',
    stop: async () => {
      await Promise.all([events.close(), control.close()]);
      commands.disconnect();
      subscriber.disconnect();
      bullmq.disconnect();
    },
  });
  lifecycle.onStop({ name: 'turn queue', stop: () => queue.close() });
  readiness.push({ name: 'redis', check: async () => void (await commands.ping()) });
  const registry = new RedisTurnRegistry(commands, prefix);
  const presence = new RedisWorkerPresence(commands, prefix);
  return { queue, events, control, registry, presence, description: `BullMQ on Redis ${redactUrlCredentials(url)} (prefix "${prefix}")` };
}

/**
 * Startup's first Redis round trip. When it fails the message names the URL (password hidden) and
 * the way out; the connections are closed so nothing keeps retrying behind the error.
 */
async function reachRedis(url: string, probes: Redis[], all: Redis[]): Promise<void> {
  let lastError: string | null = null;
  // Commands ride out a short Redis restart (REDIS_COMMAND_RETRIES, ~5 s each); at startup the first
  // connection error is the answer, so a wrong URL fails at once instead of after every retry.
  let refused!: (error: Error) => void;
  const firstError = new Promise<never>((_resolve, reject) => (refused = reject));
  firstError.catch(() => undefined);
  const remember = (error: Error) => {
    lastError = error.message;
    refused(error);
  };
  for (const redis of probes) redis.on('error', remember);
  try {
    const pinged = Promise.all(probes.map((redis) => redis.ping()));
    pinged.catch(() => undefined); // lost the race: its rejection (the connections closed) is expected
    await Promise.race([pinged, firstError]);
  } catch (error) {
    for (const redis of all) redis.disconnect();
    const reason = lastError ?? (error instanceof Error ? error.message : String(error));
    throw new Error(
      `Redis at ${redactUrlCredentials(url)} (SERVICE_REDIS_URL) is unreachable: ${reason}. Start Redis there, correct the URL, or unset SERVICE_REDIS_URL to run with the in-process queue.`,
    );
  } finally {
    for (const redis of probes) redis.off('error', remember);
  }
}

interface Core {
  /** The registry's channels (or the test's). */
  channels: readonly ChannelDescriptor[];
  logHub: LogHub;
  tools: ToolCatalog;
  sessionTools: SessionTools;
  config: Readonly<Config>;
  configFile: string | null;
  logger: Logger;
  lifecycle: Lifecycle;
  readiness: ReadinessCheck[];
  database: Database;
  models: Models;
  store: TurnStore;
  drivers: Drivers;
  routing: RoutingService;
  turns: TurnService;
  pickup: PickupWatch;
  /** A chat channel's mid-turn policy when its workflow sets none (config `channels.<name>.mid_turn`). */
  midTurnDefault: ChannelPolicyDefault;
  /** Knowledge collections: `collections` for the workflow service, `retrieve` for turns. */
  knowledge: KnowledgeService;
  /** This process's metrics (null: `metrics.enabled` is false). */
  metrics: HubMetrics | null;
  /** This process's traces (null: no `traces.otlp_url`). */
  tracing: Tracing | null;
  /** Turns taken in here, until their first answer is delivered (stage metrics, the `deliver` span). */
  arrivals: TurnArrivals;
  /** The port of the metrics listener of its own, once it listens. */
  metricsPort: number | null;
  /** The audit trail's batched writer (confirmations in the worker; keys, users, SAML, workflows in the API). */
  audit: AuditLog;
  /** Daily token budgets, checked when a worker starts a turn. */
  budgets: DailyBudgets;
}

/** What every process needs: config, logs, database (migrated), models and the turn drivers. */
async function startCore(options: ServiceOptions, processName: 'api' | 'worker'): Promise<Core> {
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
  const readiness: ReadinessCheck[] = [];
  try {
    const database = await openDatabase(config, logger);
    lifecycle.onStop({ name: 'database', stop: () => database.close() });
    readiness.push({ name: 'database', check: async () => void (await database.sequelize.query('SELECT 1')) });
    const applied = await migrateToLatest(database, logger);
    if (applied.length > 0) logger.info({ migrations: applied }, 'database migrated');
    const models = initModels(database.sequelize);
    const store = await openTurnStore(database, config);
    lifecycle.onStop({ name: 'turn store', stop: () => store.close() });
    const drivers = await createDrivers(config, logger, lifecycle, readiness, logHub);
    const routing = new RoutingService(models, channels);
    await routing.start(drivers.control);
    lifecycle.onStop({ name: 'routing', stop: async () => routing.stop() });
    const pickup = new PickupWatch(
      { registry: drivers.registry, events: drivers.events, workers: drivers.presence, logger },
      { warnAfterMs: config.worker.pickup_warning_s * 1000, sweepMs: Math.min(PICKUP_SWEEP_MS, config.worker.pickup_warning_s * 250) },
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
    const knowledge = createKnowledge(database, models);
    const tools = options.tools ?? createToolRegistry(config.tools, { workspaceDir: path.resolve(options.cwd ?? process.cwd(), config.data_dir, 'workspace'), knowledge });
    const sessionTools = new SessionTools(tools);
    const midTurnDefault = channelMidTurnDefaults(config.channels);
    const metrics = config.metrics.enabled
      ? new HubMetrics({ role: processName, tools: tools.list().map((tool) => tool.name), queueDepth: () => drivers.queue.depth() })
      : null;
    const tracing = Tracing.start(config.traces, processName);
    if (tracing) lifecycle.onStop({ name: 'traces', stop: () => tracing.shutdown() });
    const metricsPort = metrics ? await serveMetricsPort(config, metrics, logger, lifecycle, processName) : null;
    // Stopped before the database closes (the lifecycle stops in reverse): what is queued is written.
    const audit = new AuditLog(models, logger);
    lifecycle.onStop({ name: 'audit log', stop: () => audit.close() });
    const budgets = new DailyBudgets(config.usage.budgets, {
      workflowIdByName: async (name) => (await routing.workflowByName(name))?.id ?? null,
      usernameOf: async (userId) => {
        const [row] = await database.sequelize.query<{ username: string }>('SELECT username FROM users WHERE id = :id', { type: QueryTypes.SELECT, replacements: { id: userId } }).catch(() => []);
        return row?.username ?? null;
      },
    });
    return {
      channels, tools, sessionTools, logHub, config, configFile, logger, lifecycle, readiness, database, models, store, drivers, routing, pickup, turns, midTurnDefault, knowledge,
      metrics, tracing, arrivals: new TurnArrivals(), metricsPort, audit, budgets,
    };
  } catch (error) {
    await lifecycle.shutdown(() => undefined);
    throw error;
  }
}

/** How often the API process deletes audit rows older than `audit.retention_days`. */
const AUDIT_PRUNE_INTERVAL_MS = 60 * 60 * 1000;

/** Keeps the audit trail within its retention: once at start, then hourly (every API process; deleting twice is harmless). */
function pruneAuditRows(audit: AuditService, days: number, logger: Logger, lifecycle: Lifecycle): void {
  if (days <= 0) return;
  const prune = () =>
    void audit
      .prune(days)
      .then((deleted) => deleted > 0 && logger.info({ deleted, retention_days: days }, 'old audit rows deleted'))
      .catch((error: unknown) => logger.warn({ err: error }, 'could not delete old audit rows'));
  prune();
  const timer = setInterval(prune, AUDIT_PRUNE_INTERVAL_MS);
  timer.unref();
  lifecycle.onStop({ name: 'audit retention', stop: async () => clearInterval(timer) });
}

/**
 * `metrics.port`: `/metrics` on a listener of its own (how a worker process is scraped). A worker
 * with metrics on needs it: it serves nothing else.
 */
async function serveMetricsPort(config: Readonly<Config>, metrics: HubMetrics, logger: Logger, lifecycle: Lifecycle, processName: 'api' | 'worker'): Promise<number | null> {
  const { port, host, token } = config.metrics;
  if (port === null) {
    if (processName === 'worker') throw new ConfigError('metrics.port (SERVICE_METRICS_PORT): is required to serve the metrics of a worker process, which serves nothing else; give each process its own port');
    if (!token) throw new ConfigError('SERVICE_METRICS_TOKEN: is required for /metrics on the API port (or set metrics.port for a listener of its own)');
    return null;
  }
  const listener = await listen(metricsApp(metricsHandler(metrics, token), logger), host, port);
  lifecycle.onStop({ name: 'metrics listener', stop: () => listener.close(1_000) });
  logger.info({ metrics_listening: `${host}:${listener.port}` }, 'metrics served on a port of their own');
  return listener.port;
}

/** Starts consuming turns in this process, after queueing again any turn a dead process left unfinished. */
async function startWorker(core: Core, provider: LlmProvider): Promise<void> {
  const worker = new TurnWorker({
    store: core.store,
    registry: core.drivers.registry,
    presence: core.drivers.presence,
    heartbeatMs: WORKER_PRESENCE_DEFAULTS.heartbeatMs,
    queue: core.drivers.queue,
    events: core.drivers.events,
    control: core.drivers.control,
    provider: observedProvider(provider, core.metrics, core.tracing),
    metrics: core.metrics,
    tracing: core.tracing,
    audit: core.audit,
    budgets: core.budgets.enabled ? core.budgets : null,
    sessionTools: core.sessionTools,
    logger: core.logger,
    concurrency: core.config.worker.concurrency,
    agent: core.config.agent,
    contextWindow: core.config.llm.context_window,
    routing: core.routing,
    turns: core.turns,
    midTurnDefault: core.midTurnDefault,
    knowledge: {
      // The workflow's collections (ids or names) searched for this message, as a system-prompt block.
      passagesFor: async (knowledgeBaseIds, query) => {
        const { ids } = await core.knowledge.resolve(knowledgeBaseIds);
        const hits = await core.knowledge.retrieve(ids, query, KNOWLEDGE_DEFAULTS.defaultTopK);
        return hits.length > 0 ? formatPassages(hits) : null;
      },
    },
  });
  await worker.start();
  core.lifecycle.onStop({ name: 'worker', stop: () => worker.stop() });
  const requeued = await core.turns.requeueUnfinished();
  if (requeued > 0) core.logger.info({ turns: requeued }, 'queued unfinished turns again');
}

/** Starts the whole hub in this process. Throws ConfigError for configuration problems. */
export async function startService(options: ServiceOptions): Promise<RunningService> {
  const core = await startCore(options, 'api');
  const { config, logger, lifecycle, models, drivers, turns } = core;
  try {
    // A misconfigured provider (no key, no model) stops startup here, before anything listens.
    const provider = options.provider ?? createProvider(config.llm);
    const channels = new ChannelStatusBoard();
    // Auth: one authenticator for REST (the guard) and WebSocket upgrades.
    // A credential change reaches every process: caches forget it, sockets it opened close.
    const auth = createAuth(config.auth, core.database, (change) => drivers.control.publish({ kind: 'principal_changed', ...change }));
    const authenticateSocket = (request: IncomingMessage, socketOptions: { queryToken: boolean; role?: Role }) =>
      checkUpgradeCredential(request, auth.authenticator, socketOptions);
    // The Web UI's refresh token as an HttpOnly cookie (src/api/refresh-cookie.ts).
    const refreshCookie = { maxAgeS: config.auth.refresh_token_ttl_days * 86_400, secure: (config.server.public_url ?? '').startsWith('https:') };
    const samlSettings = resolveSamlSettings(config.auth.saml, config.server.public_url ?? `http://localhost:${config.server.port}`, options.cwd);
    const saml = samlSettings && new SamlService(samlSettings, auth.models, auth.users, auth.sessions, logger, core.audit);
    if (saml) lifecycle.onStop({ name: 'saml signature worker', stop: () => saml.close() });
    const access = new SessionAccess(core.store);
    await access.start(drivers.control);
    lifecycle.onStop({ name: 'session access', stop: async () => access.stop() });
    const sessions = new SessionService({
      models,
      store: core.store,
      registry: drivers.registry,
      access,
      control: drivers.control,
      defaultTools: config.agent.default_tools,
      workflowById: (id) => core.routing.workflowById(id),
      workflowByName: (name) => core.routing.workflowByName(name),
      modelAliases: [provider.model],
    });
    const workflows = new WorkflowService(models, {
      tools: core.tools,
      collections: core.knowledge,
      promptBudgetTokens: config.llm.context_window - config.agent.working_memory_tokens,
      onChange: () => drivers.control.publish({ kind: 'workflows_changed' }),
      channels: core.channels,
    });
    const hub = new SwitchboardHub({
      models,
      store: core.store,
      registry: drivers.registry,
      defaultTools: config.agent.default_tools,
      channels: core.channels,
      turns,
      midTurnPolicy: sessionMidTurnPolicy({
        registry: drivers.registry,
        store: core.store,
        workflowById: (id) => core.routing.workflowById(id),
        channelDefault: core.midTurnDefault,
      }),
      events: drivers.events,
      control: drivers.control,
      authenticateSocket,
      selectProtocol,
      isDraining: () => lifecycle.draining,
      metrics: core.metrics,
      tracing: core.tracing,
      arrivals: core.arrivals,
    });
    if (config.worker.embedded) await startWorker(core, provider);
    core.pickup.start();
    lifecycle.onStop({ name: 'pickup watch', stop: async () => core.pickup.stop() });
    // An API process whose turns no worker runs is not ready (decisions.md: readiness).
    core.readiness.push({
      name: 'workers',
      check: async () => {
        if ((await drivers.presence.alive()) === 0) throw new Error('no worker has sent a heartbeat lately: start one with `npm run worker`');
      },
    });
    const auditService = new AuditService(models);
    pruneAuditRows(auditService, config.audit.retention_days, logger, lifecycle);
    const modules = [
      authRoutes({ ...auth, refreshCookie }),
      apiKeyRoutes(auth.apiKeys, core.audit),
      userRoutes(auth.users, core.audit),
      auditRoutes(auditService),
      usageRoutes(new UsageService(core.database.sequelize)),
      samlRoutes(saml, refreshCookie),
      knowledgeRoutes(core.knowledge),
      channelRoutes(channels, core.channels.map((channel) => channel.name)),
      configRoutes({
        provider: provider.name,
        model: provider.model,
        contextWindow: config.llm.context_window,
        channels: () => channels.list().filter((channel) => channel.enabled).map((channel) => channel.name),
      }),
      (api: ApiRouter) => registerSessionRoutes(api, { sessions, hub, syncTimeoutMs: config.api.sync_timeout_s * 1000 }),
      (api: ApiRouter) => registerWorkflowRoutes(api, workflows, core.audit),
      routingTestRoutes(new RoutingService(models, core.channels)),
      (api: ApiRouter) =>
        registerToolRoutes(api, {
          pinningWorkflow: async (session) => {
            const workflow = await core.routing.workflowById(session.active_workflow_id);
            return workflow ? { name: workflow.name, tools: toolNames(workflow.tool_list) } : null;
          },
          catalog: core.tools,
          sessionTools: core.sessionTools,
          sessions,
          memory: new SessionMemory(models, { systemPrompt: config.agent.system_prompt, contextWindow: config.llm.context_window }),
        }),
    ];
    // Every channel of the registry, built before the app: webhook routes mount before the JSON parser.
    // The allowed origins are complete once the server listens (the hub's own origin needs the port).
    const origins = new Set<string>();
    const adapters = buildChannels(core.channels, config, logger, channels, origins, (name) => channelTelemetry(name, core.metrics, core.tracing, core.arrivals));
    const webhooks = adapters.flatMap(({ adapter }) => adapter.routes ?? []);
    const rateLimiter = await createRateLimiter({ config, logger, onRefusal: core.metrics ? (key) => core.metrics!.rateLimitRefusal(key) : undefined });
    // Platform webhooks are signed: they count under their own, higher per-address limit.
    for (const route of webhooks) rateLimiter.registerPrefix(`${API_PREFIX}${route.path}`, 'channel_webhooks');
    lifecycle.onStop({ name: 'rate limiter', stop: () => rateLimiter.close() });

    const app = createApp({
      config,
      logger,
      lifecycle,
      readiness: core.readiness,
      channels: () => channels.readiness(),
      guard: auth.guard,
      rawRoutes: [
        { path: SAML_PATH, handler: samlPreamble(saml) },
        ...webhooks.map((route) => ({ path: `${API_PREFIX}${route.path}`, handler: route.handler })),
        ...adapters.flatMap(({ adapter }) => adapter.rootRoutes ?? []),
        // The browser UI at `/` (GET/HEAD outside /api and /ws only; src/server/web-ui.ts).
        { path: '/', handler: webUi() },
      ],
      before: (endpoint) => [...rateLimiter.registerEndpoint(endpoint), ...channels.webMessageActivity(endpoint)],
      rateLimit: rateLimiter.middleware,
      modules,
      metrics: core.metrics,
      metricsEndpoint: core.metrics && core.metricsPort === null ? metricsHandler(core.metrics, config.metrics.token) : null,
    });
    const http = await listen(app.express, config.server.host, config.server.port);
    for (const origin of allowedOrigins(config, http.port)) origins.add(origin);
    const logStream = new LogStreamSocket({
      hub: core.logHub,
      authenticate: authenticateSocket,
      selectProtocol,
      allowedOrigins: origins,
      idleTimeoutMs: config.websocket.idle_timeout_s * 1000,
      maxBufferedBytes: LOG_STREAM_DEFAULTS.maxBufferedBytes,
    });
    attachUpgradeRouter(
      http.server,
      [
        ...adapters.flatMap(({ adapter }) => (adapter.upgrade ? [adapter.upgrade] : [])),
        { matches: (p) => logStream.matches(p), handle: (r, s, h) => logStream.handleUpgrade(r, s, h) },
      ],
      // Upgrades count under the `default` limit like every other route (spec, Limits).
      async (request, socket) => {
        const decision = await rateLimiter.checkUpgrade(request);
        if (!decision.allowed) writeUpgradeRefusal(socket, decision.retryAfterS);
        return decision.allowed;
      },
    );
    lifecycle.onStop({ name: 'log stream', stop: () => logStream.stop() });
    const stopRevocations = await drivers.control.subscribe((message) => {
      if (message.kind !== 'principal_changed') return;
      auth.credentials.forget(message.userId, message.apiKeyId);
      logStream.revoke(message);
    });
    lifecycle.onStop({ name: 'revocations', stop: async () => stopRevocations() });
    // Stopped in reverse: sockets closed with 1001 and no new upgrades, no new requests, then the
    // worker finishes or hands back its turns, then drivers and the database close.
    lifecycle.onStop({ name: 'http', stop: () => http.close(config.server.shutdown_timeout_s * 1000) });
    // A channel never stops the hub (except a required one's first start): a failed start is reported and retried with backoff.
    const supervisors = adapters.map(({ adapter, mode, required }) => new ChannelSupervisor(adapter, mode, hub, channels, logger, required));
    for (const supervisor of supervisors) lifecycle.onStop({ name: `${supervisor.name} channel`, stop: () => supervisor.stop() });
    await Promise.all(supervisors.map((supervisor) => supervisor.start()));

    const url = config.server.public_url ?? `http://${displayHost(config.server.host)}:${http.port}`;
    const facts: BannerFacts = {
      version: VERSION,
      url: `${url}/api/v1`,
      docsUrl: `${url}/api/v1/docs`,
      listening: `${config.server.host}:${http.port}`,
      storage: core.database.description,
      queue: drivers.description,
      worker: config.worker.embedded ? 'embedded' : 'off (run `npm run worker`)',
      configFile: core.configFile,
    };
    if (process.stdout.isTTY && !options.logDestination && config.log.format !== 'json') process.stdout.write(`${renderBanner(facts)}\n`);
    logger.info(facts, 'Switchboard is ready');
    const storage = { store: core.store, sequelize: core.database.sequelize };
    return { config, hub, logger, port: http.port, url, lifecycle, storage, metricsPort: core.metricsPort, stop: () => stopAll(lifecycle, logger) };
  } catch (error) {
    await lifecycle.shutdown(() => undefined);
    throw error;
  }
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
  return { config: core.config, hub: null, logger: core.logger, port: 0, url: '', lifecycle: core.lifecycle, storage, metricsPort: core.metricsPort, stop: () => stopAll(core.lifecycle, core.logger) };
}

/**
 * The registry's channels in this configuration: each declared on the status board (enabled or
 * not, with its mode), the enabled ones built from their validated `channels.<name>` section.
 */
function buildChannels(
  registry: readonly ChannelDescriptor[],
  config: Readonly<Config>,
  logger: Logger,
  board: ChannelStatusBoard,
  allowedOrigins: ReadonlySet<string>,
  telemetry: (channel: string) => ChannelTelemetry,
): { adapter: ChannelAdapter; mode: string; required: boolean }[] {
  const built: { adapter: ChannelAdapter; mode: string; required: boolean }[] = [];
  const clientAddress = createClientIpResolver(config.api.trusted_proxy_cidrs);
  for (const channel of registry) {
    const settings = config.channels[channel.name];
    const adapter = channel.create({ settings, logger, allowedOrigins, socketIdleTimeoutMs: config.websocket.idle_timeout_s * 1000, clientAddress, telemetry: telemetry(channel.name) });
    const mode = channel.mode(settings);
    board.register(channel.name, { enabled: adapter !== null, mode });
    if (adapter) built.push({ adapter, mode, required: channel.required === true });
  }
  return built;
}

function stopAll(lifecycle: Lifecycle, logger: Logger): Promise<void> {
  return lifecycle.shutdown(
    (name, error) => logger.error({ err: error, component: name }, 'error while stopping'),
    (name, milliseconds) => logger.debug({ component: name, duration_ms: milliseconds }, 'stopped'),
  );
}

function displayHost(host: string): string {
  return host === '0.0.0.0' || host === '::' ? 'localhost' : host.includes(':') ? `[${host}]` : host;
}

/** Runs a process entry: start, then stop cleanly on SIGTERM/SIGINT (a second signal forces exit). */
export async function runProcess(start: (options: ServiceOptions) => Promise<RunningService>, options: Omit<ServiceOptions, 'env'> = {}): Promise<void> {
  let service: RunningService | undefined;
  let stopping = false;
  const stop = async (signal: NodeJS.Signals) => {
    service!.logger.info({ signal }, 'shutting down');
    await service!.stop();
    service!.logger.info('stopped');
    service!.logger.flush();
    process.exit(0);
  };
  // Installed before starting: a signal that arrives during startup stops the process once it is up.
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) {
      service?.logger.warn({ signal }, 'second signal: exiting immediately');
      process.exit(1);
    }
    stopping = true;
    if (service) void stop(signal);
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);

  try {
    service = await start({ ...options, env: environmentWithDotEnv(path.resolve(DOTENV_FILE)) });
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`switchboard: configuration error: ${error.message}\n`);
      process.exit(EXIT_CONFIG);
    }
    process.stderr.write(`switchboard: could not start: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  }
  if (stopping) await stop('SIGTERM');
}

if (require.main === module) void runProcess(startService);
