import { existsSync } from 'node:fs';
import path from 'node:path';
import express, { type RequestHandler } from 'express';

/** Paths the UI never answers: the REST API and the WebSocket endpoints. */
const RESERVED_PREFIXES = ['/api/', '/ws/'];

/** Vite puts content-hashed files here: safe to cache for a year. */
const HASHED_ASSETS_PREFIX = '/assets/';

/**
 * The page's Content-Security-Policy: only our own scripts, styles and images; API and WebSocket
 * calls to this origin only (CSP Level 3's `'self'` covers its ws:/wss: twin; `ws: wss:` allowed
 * sockets to any host); no framing.
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'self'",
  "form-action 'self'",
].join('; ');

/**
 * Where `npm run build:web` writes the UI: `dist/web`, found from this file whether it runs compiled
 * (`dist/src/server`) or from source (`src/server`, under jest).
 */
export function defaultWebUiDir(): string {
  const root = path.resolve(__dirname, '../..');
  return path.basename(root) === 'dist' ? path.join(root, 'web') : path.join(root, 'dist', 'web');
}

/** Whether `npm run build:web` has written the UI (the start banner says so when not). */
export function webUiBuilt(dir: string = defaultWebUiDir()): boolean {
  return existsSync(path.join(dir, 'index.html'));
}

/**
 * Serves the built web UI at `/`: its files, and `index.html` for every other page address a
 * browser asks for (client-side routes such as `/sessions/…`), so a reload or a shared link works.
 * Never answers under `/api/` or `/ws/`, at `/metrics`, nor to anything but GET and HEAD: those reach the API (and its
 * JSON 404). Without a build, a page request gets a short page saying how to build it.
 */
export function webUi(dir: string = defaultWebUiDir()): RequestHandler {
  const index = path.join(dir, 'index.html');
  const files = express.static(dir, {
    index: false,
    redirect: false,
    setHeaders: (res, filePath) => {
      const hashed = filePath.startsWith(path.join(dir, HASHED_ASSETS_PREFIX));
      res.setHeader('Cache-Control', hashed ? 'public, max-age=31536000, immutable' : 'no-cache');
      res.setHeader('X-Content-Type-Options', 'nosniff');
    },
  });
  return (req, res, next) => {
    if ((req.method !== 'GET' && req.method !== 'HEAD') || isReserved(req.path)) return next();
    files(req, res, () => {
      // Not a file: a page address gets the app, anything else (a missing `.js`, a JSON client) the API's 404.
      if (path.extname(req.path) !== '' || !req.accepts('html')) return next();
      res.setHeader('Cache-Control', 'no-cache');
      res.setHeader('Content-Security-Policy', CONTENT_SECURITY_POLICY);
      res.setHeader('X-Content-Type-Options', 'nosniff');
      res.setHeader('Referrer-Policy', 'no-referrer');
      if (!existsSync(index)) {
        res.status(503).type('html').send(NOT_BUILT_PAGE);
        return;
      }
      res.sendFile(index, (error) => error && next(error));
    });
  };
}

/** Addresses that belong to the service even when nothing answers there (metrics off: a scraper gets a 404, not this page). */
const RESERVED_PATHS = ['/api', '/ws', '/metrics'];

function isReserved(pathname: string): boolean {
  const lower = pathname.toLowerCase();
  return RESERVED_PATHS.includes(lower) || RESERVED_PREFIXES.some((prefix) => lower.startsWith(prefix));
}

const NOT_BUILT_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Switchboard: web UI not built</title></head>
<body style="font-family: system-ui, sans-serif; max-width: 40rem; margin: 4rem auto; line-height: 1.5">
<h1>The web UI is not built yet</h1>
<p>Run <code>npm run build:web</code> (or <code>npm start</code>, which builds it) and reload this page.
The API is up: <a href="/api/v1/docs">/api/v1/docs</a>.</p>
</body></html>
`;
