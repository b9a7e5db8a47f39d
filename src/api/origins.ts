import type { Config } from '../config';

/** The web UI dev server (spec: port 5173), allowed by default so `npm run dev` in web/ just works. */
export const WEB_UI_DEV_ORIGINS = ['http://localhost:5173', 'http://127.0.0.1:5173'];

/**
 * Browser origins allowed for CORS and WebSocket upgrades: the configured ones, the backend's own
 * origin and the web UI dev server (decisions.md §5). Requests without `Origin` are not browsers.
 */
export function allowedOrigins(config: Pick<Config, 'api' | 'server'>, boundPort: number = config.server.port): Set<string> {
  const own = config.server.public_url ? [new URL(config.server.public_url).origin] : [`http://localhost:${boundPort}`, `http://127.0.0.1:${boundPort}`];
  return new Set([...own, ...WEB_UI_DEV_ORIGINS, ...config.api.allowed_origins.map((origin) => origin.replace(/\/$/, ''))]);
}
