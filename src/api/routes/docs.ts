import { OpenApiGeneratorV31, type OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { Router, type RequestHandler } from 'express';
import swaggerUi from 'swagger-ui-express';
import { VERSION } from '../../version';

export const OPENAPI_PATH = '/openapi.json';
export const DOCS_PATH = '/docs';

/** Builds the OpenAPI 3.1 document from the endpoints' zod schemas (once; it never changes at runtime). */
export function buildOpenApiDocument(registry: OpenAPIRegistry) {
  return new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'Switchboard API',
      version: VERSION,
      description:
        'REST API of the Switchboard chat-ops hub. Every JSON response is an envelope `{data, error, meta}`; ' +
        'see docs/errors.md for the error codes. Real-time output streams on the WebSocket `/ws/v1/sessions/{id}`.',
    },
  });
}

/**
 * Swagger UI gets the web UI's headers (issue 26: it had no CSP and could be framed): its own
 * scripts and styles only (swagger-ui-express serves its init script as a file), requests to this
 * origin only, never inside a frame.
 */
const DOCS_CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'self'",
  "form-action 'self'",
].join('; ');

const docsHeaders: RequestHandler = (_req, res, next) => {
  res.setHeader('Content-Security-Policy', DOCS_CONTENT_SECURITY_POLICY);
  res.setHeader('X-Frame-Options', 'DENY');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Referrer-Policy', 'no-referrer');
  next();
};

/** `/openapi.json` and the interactive docs (swagger-ui, served from the installed package: no CDN). */
export function docsRouter(document: object): Router {
  const router = Router();
  router.get(OPENAPI_PATH, (_req, res) => {
    res.json(document);
  });
  router.use(
    DOCS_PATH,
    docsHeaders,
    swaggerUi.serveFiles(undefined, { swaggerOptions: { url: `/api/v1${OPENAPI_PATH}` } }),
    swaggerUi.setup(undefined, {
      customSiteTitle: 'Switchboard API',
      swaggerOptions: { url: `/api/v1${OPENAPI_PATH}`, persistAuthorization: true },
    }),
  );
  return router;
}
