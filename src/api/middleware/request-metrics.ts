import type { RequestHandler } from 'express';
import type { HubMetrics } from '../../metrics/hub-metrics';

/** The route label of a request no route template matched (404s, probes): one series for all of them. */
export const UNMATCHED_ROUTE_LABEL = 'unmatched';
/** The route label of the web UI's files (everything outside /api and /ws that no route named). */
export const WEB_UI_ROUTE_LABEL = 'web-ui';

/**
 * Counts every answered request by method, route template and status, with its latency
 * (`switchboard_http_requests_total`, `switchboard_http_request_duration_seconds`). The route is the
 * template the API router or a raw route set (`/api/v1/sessions/{id}`), never the raw path, so ids
 * do not become label values.
 */
export function requestMetrics(metrics: HubMetrics): RequestHandler {
  return (req, res, next) => {
    const started = process.hrtime.bigint();
    res.once('finish', () => {
      const route = (res.locals.route as string | undefined) ?? (/^\/(api|ws)(\/|$)/.test(req.originalUrl) ? UNMATCHED_ROUTE_LABEL : WEB_UI_ROUTE_LABEL);
      metrics.httpRequest(req.method, route, res.statusCode, Number(process.hrtime.bigint() - started) / 1e9);
    });
    next();
  };
}
