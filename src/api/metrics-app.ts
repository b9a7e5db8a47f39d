import express, { type Express, type RequestHandler } from 'express';
import { METRICS_PATH } from '../metrics/metrics-endpoint';
import type { Logger } from '../logs/logger';
import { errorHandler, notFound } from './middleware/error-handler';
import { requestId } from './middleware/request-id';

/**
 * The app of a metrics listener of its own (`metrics.port`; how a worker process is scraped):
 * `/metrics` and nothing else, errors in the API's envelope.
 */
export function metricsApp(handler: RequestHandler, logger: Logger): Express {
  const app = express();
  app.disable('x-powered-by');
  app.use(requestId());
  app.use(METRICS_PATH, handler);
  app.use(notFound());
  app.use(errorHandler(logger));
  return app;
}
