import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Router, type RequestHandler } from 'express';

/** Where the demo lives: the page, the widget bundle and the page's script. */
export const DEMO_PATH = '/webchat';
export const TYPING_EVENT = 'bot_typing';

/** The CSS class the demo page puts on <body> while the agent works (from `bot_typing`). */
const TYPING_CLASS = 'webchat-typing';

/**
 * Only our own scripts; the widget injects its styles inline and its icons as data: URIs. Socket.IO
 * connects to this origin only (`'self'` covers its ws:/wss: twin).
 */
const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'self'",
  "form-action 'self'",
].join('; ');

/**
 * The widget's stylesheets import a web font from Google (`@import url(https://fonts.googleapis.com/…)`
 * in the bundle's CSS strings). The CSP refuses it, and the browser logged each refusal as an error on
 * every load: the bundle is served without those imports, so the page asks no other site for anything
 * and a visitor's console stays clean (the widget's font stack falls back to the system font).
 */
const THIRD_PARTY_FONT_IMPORT = /@import url\(https:\/\/fonts\.googleapis\.com\/[^)]*\);?/g;

/**
 * Where `npm run extras:install` puts the widget (extras/webchat-widget, a part of its own: ~550
 * packages the default install leaves out), found from this file compiled (`dist/adapters/webchat`)
 * or from source (`adapters/webchat`, under jest); a copy the hub's own node_modules resolves also counts.
 */
function widgetSearchPaths(): string[] {
  let root = __dirname;
  while (!existsSync(path.join(root, 'package.json')) && path.dirname(root) !== root) root = path.dirname(root);
  if (path.basename(root) === 'dist') root = path.dirname(root);
  return [path.join(root, 'extras', 'webchat-widget'), root];
}

/** The widget bundle of the rasa-webchat package (React included) without its font imports, or null when it is not installed. */
function widgetBundle(): string | null {
  try {
    return readFileSync(require.resolve('rasa-webchat/lib/index.js', { paths: widgetSearchPaths() }), 'utf8').replace(THIRD_PARTY_FONT_IMPORT, '');
  } catch {
    return null;
  }
}

/**
 * `/webchat/demo`: a page that embeds the rasa-webchat widget from its npm package, pointed at this
 * hub — what a site owner pastes into their own pages, working. `/webchat/widget.js` serves the
 * package's bundle and `/webchat/demo.js` starts it (no inline script, so the CSP stays strict).
 */
export function demoRoutes(socketPath: string): RequestHandler {
  const router = Router();
  const bundle = widgetBundle();
  const headers: RequestHandler = (_req, res, next) => {
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Referrer-Policy', 'no-referrer');
    next();
  };
  router.use(headers);
  router.get('/demo', (_req, res) => {
    res.setHeader('Content-Security-Policy', CONTENT_SECURITY_POLICY);
    res.setHeader('Cache-Control', 'no-cache');
    if (!bundle) {
      res.status(503).type('html').send(NOT_INSTALLED_PAGE);
      return;
    }
    res.type('html').send(demoPage(socketPath));
  });
  router.get('/demo.js', (_req, res) => {
    res.setHeader('Cache-Control', 'no-cache');
    res.type('application/javascript').send(DEMO_SCRIPT);
  });
  router.get('/widget.js', (_req, res, next) => {
    if (!bundle) return next();
    res.setHeader('Cache-Control', 'public, max-age=3600');
    res.type('application/javascript').send(bundle);
  });
  return router;
}

/** The widget's socket path as it wants it (socket.io-client appends nothing to it). */
function widgetSocketPath(path: string): string {
  return path.endsWith('/') ? path : `${path}/`;
}

function demoPage(socketPath: string): string {
  // JSON in a non-executed script element: data for demo.js, allowed by the CSP; `<` escaped so no
  // value can end the element.
  const config = JSON.stringify({ socketPath: widgetSocketPath(socketPath), typingEvent: TYPING_EVENT, typingClass: TYPING_CLASS }).replace(/</g, '\\u003c');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Switchboard website chat: demo</title>
<style>
  body { font-family: system-ui, sans-serif; max-width: 44rem; margin: 3rem auto; padding: 0 1rem; line-height: 1.55; color: #1d232b; }
  code, pre { background: #f1f3f6; border-radius: 4px; }
  pre { padding: 0.8rem 1rem; overflow-x: auto; font-size: 0.85rem; }
  /* The agent is working: three dots below the last message, like the widget's own. */
  body.${TYPING_CLASS} .rw-messages-container::after {
    content: '\\2022\\2022\\2022'; display: block; width: 2.4rem; margin: 10px; padding: 8px 15px;
    border-radius: 0 15px 15px 15px; background: #f4f7f9; color: #8a94a6; letter-spacing: 4px;
    animation: webchat-typing 1.2s ease-in-out infinite;
  }
  @keyframes webchat-typing { 50% { opacity: 0.35; } }
</style>
</head>
<body>
<h1>Website chat demo</h1>
<p>This page embeds the open-source <a href="https://github.com/botfront/rasa-webchat">Rasa Webchat</a>
widget (npm <code>rasa-webchat</code>), pointed at this Switchboard hub. Open the bubble in the corner and
write a message: it reaches the workflows bound to the <code>webchat</code> channel.</p>
<p>To put the same widget on your own site, add your site's origin to
<code>channels.webchat.allowed_origins</code> and paste this before <code>&lt;/body&gt;</code>
(the widget's script may also come from your own copy of the package; the hub's guide,
<code>docs/webchat.md</code>, has the details):</p>
<pre id="snippet"></pre>
<script type="application/json" id="webchat-config">${config}</script>
<script src="widget.js"></script>
<script src="demo.js"></script>
</body>
</html>
`;
}

/** Starts the widget with this hub's address, shows typing from `bot_typing`, and fills in the snippet. */
const DEMO_SCRIPT = `(function () {
  'use strict';
  var config = JSON.parse(document.getElementById('webchat-config').textContent);
  var origin = window.location.origin;
  var onSocketEvent = {};
  onSocketEvent[config.typingEvent] = function (event) {
    document.body.classList.toggle(config.typingClass, Boolean(event && event.typing));
  };
  window.WebChat.default({
    socketUrl: origin,
    socketPath: config.socketPath,
    title: 'Switchboard',
    subtitle: 'Website chat demo',
    inputTextFieldHint: 'Type a message…',
    customData: { tags: ['demo'] },
    params: { storage: 'local' },
    onSocketEvent: onSocketEvent
  }, null);
  document.getElementById('snippet').textContent = [
    '<script src="' + origin + '/webchat/widget.js"></' + 'script>',
    '<script>',
    '  WebChat.default({',
    '    socketUrl: ' + JSON.stringify(origin) + ',',
    '    socketPath: ' + JSON.stringify(config.socketPath) + ',',
    "    title: 'Switchboard',",
    "    customData: { language: 'en' }",
    '  }, null);',
    '</' + 'script>'
  ].join('\\n');
})();
`;

const NOT_INSTALLED_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Switchboard: webchat demo unavailable</title></head>
<body style="font-family: system-ui, sans-serif; max-width: 40rem; margin: 4rem auto; line-height: 1.5">
<h1>The widget package is not installed</h1>
<p>The demo page serves the widget from the npm package <code>rasa-webchat</code>, which the default
install leaves out. Run <code>npm run extras:install</code> (it installs <code>extras/webchat-widget</code>),
restart the hub and reload this page.
The channel itself works without it: your site loads the widget from its own copy.</p>
</body></html>
`;
