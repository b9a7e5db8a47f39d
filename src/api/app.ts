import cors from 'cors';
import express, { type Express, type RequestHandler } from 'express';
import type { Config } from '../config';
import { AppError } from '../core/errors';
import type { Logger } from '../logs/logger';
import type { Lifecycle } from '../server/lifecycle';
import type { ReadinessCheck } from '../server/readiness';
import { ApiRouter, type AccessGuard, type ApiRouterOptions } from './endpoint';
import { accessLog } from './middleware/access-log';
import { errorHandler, notFound } from './middleware/error-handler';
import { bodyGuard } from './middleware/input-guard';
import { requestId } from './middleware/request-id';
import { requestMetrics, UNMATCHED_ROUTE_LABEL } from './middleware/request-metrics';
import type { HubMetrics } from '../metrics/hub-metrics';
import { METRICS_PATH } from '../metrics/metrics-endpoint';
import { allowedOrigins } from './origins';
import { buildOpenApiDocument, docsRouter } from './routes/docs';
import { NOT_READY_RETRY_AFTER_S, registerHealthRoutes, type HealthDeps } from './routes/health';

export const API_PREFIX = '/api/v1';

/**
 * Largest JSON body accepted. A `user_message` may hold 65,536 characters; JSON-escaped worst case
 * (`\uXXXX`, 6 bytes per character) that is ~384 KiB, plus metadata. 1 MiB also matches the
 * WebSocket frame limit, so both channels accept the same messages.
 */
export const JSON_BODY_LIMIT_BYTES = 1024 * 1024;

/** A resource module: adds its endpoints to the API router. */
export type ApiModule = (api: ApiRouter) => void;

export interface AppOptions {
  config: Readonly<Config>;
  logger: Logger;
  lifecycle: Lifecycle;
  readiness: readonly ReadinessCheck[];
  /** Channel states for `/health/ready` (reported, never failing it). */
  channels?: HealthDeps['channels'];
  /** MCP server states for `/health/ready` (a failed one: `degraded`, never 503). */
  mcpServers?: HealthDeps['mcpServers'];
  modules?: readonly ApiModule[];
  guard?: AccessGuard;
  /** Per-endpoint middleware (rate limiting); see ApiRouterOptions.before. */
  before?: ApiRouterOptions['before'];
  /**
   * Runs once for every request, before raw routes, body parsing and routing: the rate limiter
   * (src/ratelimit), so a refused request costs no body parsing and every route is counted.
   */
  rateLimit?: RequestHandler;
  /** Routes mounted before the JSON parser, for endpoints that read their own body (webhooks). */
  rawRoutes?: readonly { path: string; handler: RequestHandler }[];
  /** Request metrics (null: metrics off). */
  metrics?: HubMetrics | null;
  /** `GET /metrics` on this port (null: not served here), ahead of the rate limiter and the drain refusal. */
  metricsEndpoint?: RequestHandler | null;
}

export interface App {
  express: Express;
  openapi: ReturnType<typeof buildOpenApiDocument>;
}

export function createApp(options: AppOptions): App {
  const { config, logger, lifecycle } = options;
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false); // API answers are not cached by validators: no hash of every body
  app.set('trust proxy', false); // client IPs come from the rate limiter's own XFF walk, never express's

  app.use(requestId());
  if (options.metrics) app.use(requestMetrics(options.metrics));
  app.use(accessLog(logger, { quietPrefixes: [`${API_PREFIX}/health`, METRICS_PATH] }));
  if (options.metricsEndpoint) app.use(METRICS_PATH, labelled(METRICS_PATH, options.metricsEndpoint));
  app.use(refuseWhileDraining(lifecycle));
  app.use(corsForAllowedOrigins(config));
  if (options.rateLimit) app.use(options.rateLimit);
  for (const route of options.rawRoutes ?? []) {
    // `/` is the web UI's catch-all (it passes on what is not its own): it names no route.
    if (route.path === '/') app.use(route.path, route.handler);
    else app.use(route.path, labelled(route.path, route.handler));
  }
  app.use(express.json({ limit: JSON_BODY_LIMIT_BYTES, type: ['application/json', 'application/*+json'] }));
  app.use(bodyGuard());

  const answerError = errorHandler(logger);
  const api = new ApiRouter({ guard: options.guard, before: options.before, onError: answerError });
  registerHealthRoutes(api, options);
  for (const register of options.modules ?? []) register(api);
  const openapi = buildOpenApiDocument(api.registry);

  app.use(API_PREFIX, api.finish());
  // After the API: its requests never test the docs' paths (no endpoint shares them).
  app.use(API_PREFIX, docsRouter(openapi));
  app.use(notFound());
  app.use(answerError);
  return { express: app, openapi };
}

/**
 * Names a route's requests by its mount path (metrics and access log), as the API router does with
 * templates. One layer with the handler: each layer is one more path match for every request.
 */
function labelled(route: string, handler: RequestHandler): RequestHandler {
  return (req, res, next) => {
    res.locals.route ??= route;
    return handler(req, res, next);
  };
}

export { UNMATCHED_ROUTE_LABEL };

function refuseWhileDraining(lifecycle: Lifecycle): RequestHandler {
  return (_req, res, next) => {
    if (!lifecycle.draining) return next();
    res.setHeader('Connection', 'close');
    throw new AppError('SERVICE_UNAVAILABLE', 'The service is shutting down.', {
      headers: { 'Retry-After': String(NOT_READY_RETRY_AFTER_S) },
    });
  };
}

function corsForAllowedOrigins(config: Readonly<Config>): RequestHandler {
  const origins = allowedOrigins(config);
  const handler = cors({
    origin: (origin, callback) => callback(null, origin === undefined || origins.has(origin)),
    allowedHeaders: ['Authorization', 'Content-Type', 'X-API-Key', 'X-Request-ID', 'X-Switchboard-Refresh'],
    exposedHeaders: ['X-Request-ID', 'Retry-After', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset'],
    methods: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'],
    // The Web UI's dev server (another port of the same site) sends the refresh cookie to the hub.
    credentials: true,
    maxAge: 600,
  });
  // Only a real preflight is CORS's to answer; a plain OPTIONS reaches the router (204 + Allow).
  // A request without Origin is not a cross-origin one: it gets only the `Vary` a cache needs.
  return (req, res, next) => {
    if (req.headers.origin === undefined) {
      res.setHeader('Vary', 'Origin');
      return next();
    }
    if (req.method === 'OPTIONS' && req.headers['access-control-request-method'] === undefined) return next();
    return handler(req, res, next);
  };
}
