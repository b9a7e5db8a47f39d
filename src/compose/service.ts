// First: the OpenAPI registry needs `.openapi()` on every zod schema the API modules build as they load.
import '../api/schemas/openapi-zod';
import { createProvider } from '../agent/providers';
import { keepRowsWithin } from '../server/retention';
import { UsageService } from '../usage/usage-service';
import { AuditService } from '../audit/audit-service';
import { describeModel, nextStep, serviceUrl, renderBanner, type BannerFacts } from '../server/banner';
import { webUiBuilt } from '../server/web-ui';
import { ChannelStatusBoard } from '../server/channel-status';
import { workersReadiness } from '../server/readiness';
import { VERSION } from '../version';
import { selectProtocol } from '../auth/websocket';
import { apiModules } from './api-modules';
import { composeAuth } from './auth';
import { buildChannels, startChannels } from './channels';
import { startCore } from './core';
import { composeHub } from './hub';
import { serveHttp } from './http';
import type { Core, RunningService, ServiceOptions } from './service-types';
import { stopAll } from './shutdown';
import { startWorker } from './worker';
import { composeEvents, startEvents } from './events';

/** Starts the whole hub in this process. Throws ConfigError for configuration problems. */
export async function startService(options: ServiceOptions): Promise<RunningService> {
  const core = await startCore(options, 'api');
  const { config, logger, lifecycle } = core;
  try {
    // A misconfigured provider (no key, no model) stops startup here, before anything listens.
    const provider = options.provider ?? createProvider(config.llm);
    const board = new ChannelStatusBoard();
    const auth = composeAuth(core, options.cwd);
    const hubParts = await composeHub(core, provider);
    if (config.worker.embedded) await startWorker(core, provider);
    core.pickup.start();
    lifecycle.onStop({ name: 'pickup watch', stop: async () => core.pickup.stop() });
    core.readiness.push(workersReadiness(core.drivers.presence));
    const audit = new AuditService(core.models);
    const usage = new UsageService(core.database.sequelize);
    const stopRetention = [
      keepRowsWithin('audit', audit, config.audit.retention_days, logger),
      keepRowsWithin('usage', usage, config.usage.retention_days, logger),
    ];
    lifecycle.onStop({ name: 'retention', stop: async () => stopRetention.forEach((stop) => stop()) });
    const origins = new Set<string>();
    const channels = buildChannels(core, board, origins, auth.authenticateSocket);
    const events = composeEvents(core, options, channels);
    const modules = apiModules(core, provider, auth, hubParts, board, { audit, usage, channels, events: events.events });
    const port = await serveHttp(core, { modules, channels, board, auth, origins, hooks: events });
    await startChannels(channels, hubParts.hub, board, logger, lifecycle);
    await startEvents(core, events, hubParts.hub);
    const url = announce(core, port, options, { model: describeModel(provider.name, provider.model), channels: board.enabledNames() });
    const storage = { store: core.store, sequelize: core.database.sequelize };
    const socketAuth = { authenticate: auth.authenticateSocket, selectProtocol };
    return {
      config,
      hub: hubParts.hub,
      socketAuth,
      logger,
      port,
      url,
      lifecycle,
      storage,
      metricsPort: core.metricsPort,
      stop: () => stopAll(lifecycle, logger),
    };
  } catch (error) {
    await lifecycle.shutdown(() => undefined);
    throw error;
  }
}

/** Says the hub is ready: a banner on a terminal, one log line with the same facts. Returns the hub's URL. */
function announce(core: Core, port: number, options: ServiceOptions, running: Pick<BannerFacts, 'model' | 'channels'>): string {
  const { config, logger } = core;
  const url = serviceUrl(config.server, port);
  const built = webUiBuilt();
  const webUi = `${url}/`;
  const facts: BannerFacts = {
    version: VERSION,
    web_ui: built ? webUi : `${webUi} (not built: npm run build:web)`,
    url: `${url}/api/v1`,
    docsUrl: `${url}/api/v1/docs`,
    listening: `${config.server.host}:${port}`,
    storage: core.database.description,
    queue: core.drivers.description,
    worker: config.worker.embedded ? 'embedded' : 'off (run `npm run worker`)',
    configFile: core.configFile,
    ...running,
    next_step: nextStep(webUi, built),
  };
  if (process.stdout.isTTY && !options.logDestination && config.log.format !== 'json') process.stdout.write(`${renderBanner(facts)}\n`);
  logger.info(facts, 'Switchboard is ready');
  return url;
}
