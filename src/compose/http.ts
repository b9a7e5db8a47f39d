import { ApprovalStreamSocket } from '../approvals/approval-stream-socket';
import { API_PREFIX, createApp, type ApiModule } from '../api/app';
import { allowedOrigins } from '../api/origins';
import { SAML_PATH, samlPreamble } from '../api/routes/saml';
import { selectProtocol } from '../auth/websocket';
import { LOG_STREAM_DEFAULTS, LogStreamSocket } from '../logs/log-stream-socket';
import { metricsHandler } from '../metrics/metrics-endpoint';
import { createRateLimiter, upgradeGuard, type RateLimiter } from '../ratelimit';
import type { ChannelStatusBoard } from '../server/channel-status';
import { listen } from '../server/http-server';
import { attachUpgradeRouter } from '../server/upgrade-router';
import { webUi } from '../server/web-ui';
import type { RequestHandler } from 'express';
import { HOOKS_PATH } from '../api/routes/hook-route';
import type { AuthParts } from './auth';
import type { BuiltChannel } from './channels';
import type { Core } from './service-types';

/** What the HTTP server of an API process is built from. */
export interface HttpParts {
  modules: ApiModule[];
  channels: readonly BuiltChannel[];
  board: ChannelStatusBoard;
  auth: AuthParts;
  /** The allowed browser origins, shared with the channels; completed here once the port is known. */
  origins: Set<string>;
  /** Workflow webhooks (`POST /api/v1/hooks/{workflow}/{hook}`), raw like the platform webhooks. */
  hooks?: { route: RequestHandler; limiter(limiter: RateLimiter): void };
}

/** Each MCP server's state for the readiness answer (its error only when it failed). */
function mcpReadiness(mcp: Core['mcp']) {
  return Object.fromEntries(
    mcp
      .servers()
      .map((server) => [
        server.name,
        server.state === 'failed' && server.last_error ? { status: server.state, error: server.last_error } : { status: server.state },
      ]),
  );
}

/** Builds the app (REST, webhooks, the web UI), listens, and routes WebSocket upgrades. Returns the port. */
export async function serveHttp(core: Core, parts: HttpParts): Promise<number> {
  const { config, lifecycle } = core;
  const rateLimiter = await startRateLimiter(core, parts.channels);
  if (parts.hooks) {
    // Hooks count against their own limit (all senders together), not the per-address default.
    rateLimiter.registerPrefix(`${API_PREFIX}${HOOKS_PATH}`, 'channel_webhooks');
    parts.hooks.limiter(rateLimiter);
  }
  const webhooks = parts.channels.flatMap(({ adapter }) => adapter.routes ?? []);
  const app = createApp({
    config,
    logger: core.logger,
    lifecycle,
    readiness: core.readiness,
    channels: () => parts.board.readiness(),
    mcpServers: () => mcpReadiness(core.mcp),
    guard: parts.auth.auth.guard,
    rawRoutes: [
      { path: SAML_PATH, handler: samlPreamble(parts.auth.saml) },
      ...webhooks.map((route) => ({ path: `${API_PREFIX}${route.path}`, handler: route.handler })),
      ...(parts.hooks ? [{ path: `${API_PREFIX}${HOOKS_PATH}`, handler: parts.hooks.route }] : []),
      ...parts.channels.flatMap(({ adapter }) => adapter.rootRoutes ?? []),
      // The browser UI at `/` (GET/HEAD outside /api and /ws only; src/server/web-ui.ts).
      { path: '/', handler: webUi() },
    ],
    before: (endpoint) => [...rateLimiter.registerEndpoint(endpoint), ...parts.board.webMessageActivity(endpoint)],
    rateLimit: rateLimiter.middleware,
    modules: parts.modules,
    metrics: core.metrics,
    metricsEndpoint: core.metrics && core.metricsPort === null ? metricsHandler(core.metrics, config.metrics.token) : null,
  });
  const http = await listen(app.express, config.server.host, config.server.port);
  for (const origin of allowedOrigins(config, http.port)) parts.origins.add(origin);
  const logStream = startLogStream(core, parts);
  const approvalStream = new ApprovalStreamSocket({
    authenticate: parts.auth.authenticateSocket,
    selectProtocol,
    allowedOrigins: parts.origins,
    idleTimeoutMs: config.websocket.idle_timeout_s * 1000,
  });
  attachUpgradeRouter(
    http.server,
    [
      ...parts.channels.flatMap(({ adapter }) => (adapter.upgrade ? [adapter.upgrade] : [])),
      { matches: (p) => logStream.matches(p), handle: (r, s, h) => logStream.handleUpgrade(r, s, h) },
      { matches: (p) => approvalStream.matches(p), handle: (r, s, h) => approvalStream.handleUpgrade(r, s, h) },
    ],
    upgradeGuard(rateLimiter),
  );
  lifecycle.onStop({ name: 'log stream', stop: () => logStream.stop() });
  lifecycle.onStop({ name: 'approvals stream', stop: () => approvalStream.stop() });
  await followRevocations(core, parts.auth, logStream, approvalStream);
  // Stopped in reverse: sockets closed with 1001 and no new upgrades, no new requests, then the
  // worker finishes or hands back its turns, then drivers and the database close.
  lifecycle.onStop({ name: 'http', stop: () => http.close(config.server.shutdown_timeout_s * 1000) });
  return http.port;
}

/** The moving-window limiter; platform webhooks are signed and count under their own, higher per-address limit. */
async function startRateLimiter(core: Core, channels: readonly BuiltChannel[]): Promise<RateLimiter> {
  const { metrics } = core;
  const rateLimiter = await createRateLimiter({
    config: core.config,
    logger: core.logger,
    onRefusal: metrics ? (key) => metrics.rateLimitRefusal(key) : undefined,
  });
  for (const route of channels.flatMap(({ adapter }) => adapter.routes ?? [])) rateLimiter.registerPrefix(`${API_PREFIX}${route.path}`, 'channel_webhooks');
  core.lifecycle.onStop({ name: 'rate limiter', stop: () => rateLimiter.close() });
  return rateLimiter;
}

/** The admin log stream (`/ws/v1/logs`). */
function startLogStream(core: Core, parts: HttpParts): LogStreamSocket {
  return new LogStreamSocket({
    hub: core.logHub,
    authenticate: parts.auth.authenticateSocket,
    selectProtocol,
    allowedOrigins: parts.origins,
    idleTimeoutMs: core.config.websocket.idle_timeout_s * 1000,
    maxBufferedBytes: LOG_STREAM_DEFAULTS.maxBufferedBytes,
  });
}

/** A credential changed in any process: this one forgets it and closes the streams it opened; approval changes ring the Approvals pages. */
async function followRevocations(core: Core, authParts: AuthParts, logStream: LogStreamSocket, approvalStream: ApprovalStreamSocket): Promise<void> {
  const stopRevocations = await core.drivers.control.subscribe((message) => {
    // Any process opened, counted or decided an approval: the Approvals pages open here read their list again.
    if (message.kind === 'approval_changed') approvalStream.changed();
    if (message.kind !== 'principal_changed') return;
    authParts.auth.credentials.forget(message.userId, message.apiKeyId);
    logStream.revoke(message);
    approvalStream.revoke(message);
  });
  core.lifecycle.onStop({ name: 'revocations', stop: async () => stopRevocations() });
}
