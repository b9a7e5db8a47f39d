declare const __SWITCHBOARD_API_URL__: string;

/**
 * Where the hub is. Built into the hub (`/`): the page's own origin. Under the dev server (5173):
 * port 8000 of the same host, as the spec has the UI discover it. `SWITCHBOARD_API_URL` at build or
 * dev-server start overrides both.
 */
export function apiOrigin(): string {
  const configured = typeof __SWITCHBOARD_API_URL__ === 'string' ? __SWITCHBOARD_API_URL__ : '';
  if (configured) return configured.replace(/\/+$/, '');
  if (import.meta.env.DEV) return `${location.protocol}//${location.hostname}:8000`;
  return location.origin;
}

/** The WebSocket twin of apiOrigin (`http:` → `ws:`, `https:` → `wss:`). */
export function socketOrigin(): string {
  return apiOrigin().replace(/^http/, 'ws');
}
