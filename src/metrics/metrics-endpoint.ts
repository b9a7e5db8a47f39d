import { createHash, timingSafeEqual } from 'node:crypto';
import type { RequestHandler } from 'express';
import { AppError } from '../core/errors';
import type { HubMetrics } from './hub-metrics';

/** Where Prometheus scrapes, on the API port or on a listener of its own. */
export const METRICS_PATH = '/metrics';

/**
 * `GET /metrics`: the text exposition. With a token, only a request that presents it as
 * `Authorization: Bearer <token>` is answered (401 otherwise, compared in constant time); without
 * one (allowed only on a listener of its own, loopback by default) anyone who reaches it is.
 */
export function metricsHandler(metrics: HubMetrics, token: string | null): RequestHandler {
  const expected = token === null ? null : digest(token);
  return async (req, res) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      throw new AppError('METHOD_NOT_ALLOWED', `${req.method} is not allowed here; use GET.`, {
        headers: { Allow: 'GET, HEAD' },
        details: { allowed: ['GET', 'HEAD'] },
      });
    }
    if (expected !== null) {
      const presented = /^bearer\s+(.+)$/i.exec(req.headers.authorization ?? '')?.[1]?.trim();
      if (!presented || !timingSafeEqual(digest(presented), expected)) {
        throw new AppError('UNAUTHORIZED', 'The metrics endpoint needs its bearer token (SERVICE_METRICS_TOKEN).', {
          headers: { 'WWW-Authenticate': 'Bearer realm="metrics"' },
        });
      }
    }
    const { contentType, body } = await metrics.exposition();
    res.status(200).setHeader('Content-Type', contentType).setHeader('Cache-Control', 'no-store').send(body);
  };
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}
