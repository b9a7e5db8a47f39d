/**
 * Composition root: reads the configuration, opens storage, builds the app and serves it. The only
 * file that knows every concrete implementation.
 */
import path from 'node:path';
import { Redis } from 'ioredis';
import { createApp } from './api/app';
import { apiKeyRoutes } from './api/routes/api-keys';
import { authRoutes } from './api/routes/auth';
import { SAML_PATH, samlPreamble, samlRoutes } from './api/routes/saml';
import { userRoutes } from './api/routes/users';
import { createAuth } from './auth';
import { SamlService } from './auth/saml/service';
import { resolveSamlSettings } from './auth/saml/settings';
import { ConfigError, loadConfig, type Config } from './config';
import { DOTENV_FILE, environmentWithDotEnv } from './config/dotenv';
import { openDatabase } from './db/database';
import { migrateToLatest } from './db/migrator';
import { createLogger, type Logger } from './logs/logger';
import { redactUrlCredentials } from './logs/redact';
import { renderBanner, type BannerFacts } from './server/banner';
import { listen } from './server/http-server';
import { createRateLimiter } from './ratelimit';
import { Lifecycle } from './server/lifecycle';
import type { ReadinessCheck } from './server/readiness';
import { VERSION } from './version';
import type { DestinationStream } from 'pino';

/** Exit status for configuration errors (sysexits.h EX_CONFIG). */
export const EXIT_CONFIG = 78;

export interface ServiceOptions {
  env: Record<string, string | undefined>;
  cwd?: string;
  /** Tests capture log lines here. */
  logDestination?: DestinationStream;
}

export interface RunningService {
  config: Readonly<Config>;
  logger: Logger;
  port: number;
  url: string;
  lifecycle: Lifecycle;
  stop(): Promise<void>;
}

/** Starts the whole hub in this process. Throws ConfigError for configuration problems. */
export async function startService(options: ServiceOptions): Promise<RunningService> {
  const { config, configFile, warnings } = loadConfig({ env: options.env, cwd: options.cwd });
  const logger = createLogger({ ...config.log, name: 'api', destination: options.logDestination });
  for (const warning of warnings) logger.warn(warning);

  const lifecycle = new Lifecycle();
  const readiness: ReadinessCheck[] = [];
  try {
    const database = await openDatabase(config, logger);
    lifecycle.onStop({ name: 'database', stop: () => database.close() });
    readiness.push({ name: 'database', check: async () => void (await database.sequelize.query('SELECT 1')) });
    const applied = await migrateToLatest(database, logger);
    if (applied.length > 0) logger.info({ migrations: applied }, 'database migrated');

    let queueDescription = 'in-process (embedded)';
    if (config.redis.url) {
      const redis = new Redis(config.redis.url, { maxRetriesPerRequest: 1, connectTimeout: 2_000, lazyConnect: true });
      redis.on('error', (error) => logger.warn({ err: error.message }, 'redis connection error'));
      await redis.connect();
      lifecycle.onStop({ name: 'redis', stop: async () => void (await redis.quit()) });
      readiness.push({ name: 'redis', check: async () => void (await redis.ping()) });
      queueDescription = `BullMQ on Redis ${redactUrlCredentials(config.redis.url)} (prefix "${config.redis.prefix}")`;
    }

    // Auth: one authenticator for REST (the guard) and WebSocket upgrades (src/auth/websocket.ts).
    const auth = createAuth(config.auth, database);
    const samlSettings = resolveSamlSettings(config.auth.saml, config.server.public_url ?? `http://localhost:${config.server.port}`, options.cwd);
    const saml = samlSettings && new SamlService(samlSettings, auth.models, auth.users, auth.sessions, logger);
    const modules = [authRoutes(auth), apiKeyRoutes(auth.apiKeys), userRoutes(auth.users), samlRoutes(saml)];
    const rawRoutes = [{ path: SAML_PATH, handler: samlPreamble(saml) }];
    const rateLimiter = await createRateLimiter({ config, logger });
    lifecycle.onStop({ name: 'rate limiter', stop: () => rateLimiter.close() });

    const app = createApp({
      config,
      logger,
      lifecycle,
      readiness,
      guard: auth.guard,
      modules,
      rawRoutes,
      before: rateLimiter.registerEndpoint,
      rateLimit: rateLimiter.middleware,
    });
    const http = await listen(app.express, config.server.host, config.server.port);
    // Registered last, so it stops first: no new requests while the rest shuts down.
    lifecycle.onStop({ name: 'http', stop: () => http.close(config.server.shutdown_timeout_s * 1000) });

    const url = config.server.public_url ?? `http://${displayHost(config.server.host)}:${http.port}`;
    const facts: BannerFacts = {
      version: VERSION,
      url: `${url}/api/v1`,
      docsUrl: `${url}/api/v1/docs`,
      listening: `${config.server.host}:${http.port}`,
      storage: database.description,
      queue: queueDescription,
      worker: config.worker.embedded ? 'embedded' : 'off (run `npm run worker`)',
      configFile,
    };
    if (process.stdout.isTTY && !options.logDestination && config.log.format !== 'json') process.stdout.write(`${renderBanner(facts)}\n`);
    logger.info(facts, 'Switchboard is ready');

    return {
      config,
      logger,
      port: http.port,
      url,
      lifecycle,
      stop: () => lifecycle.shutdown((name, error) => logger.error({ err: error, component: name }, 'error while stopping')),
    };
  } catch (error) {
    await lifecycle.shutdown(() => undefined);
    throw error;
  }
}

function displayHost(host: string): string {
  return host === '0.0.0.0' || host === '::' ? 'localhost' : host.includes(':') ? `[${host}]` : host;
}

/** `node dist/src/main.js`: start, then stop cleanly on SIGTERM/SIGINT (a second signal forces exit). */
async function run(): Promise<void> {
  let service: RunningService | undefined;
  let stopping = false;
  const stop = async (signal: NodeJS.Signals) => {
    service!.logger.info({ signal }, 'shutting down');
    await service!.stop();
    service!.logger.info('stopped');
    service!.logger.flush();
    process.exit(0);
  };
  // Installed before starting: a signal that arrives during startup stops the hub once it is up.
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
    service = await startService({ env: environmentWithDotEnv(path.resolve(DOTENV_FILE)) });
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

if (require.main === module) void run();
