import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Request, RequestHandler, Response } from 'express';
import type { Logger } from '../../logs/logger';
import { redactSecretQueryValues } from '../../logs/redact';

/**
 * One line per request when it ends: method, path template, status and duration as the message
 * (so the admin log stream shows them too), with the request id and the URL (secret query values
 * hidden). Nothing is allocated per request unless the line's level is enabled: a silent or
 * warn-level hub pays for no access log (pino-http made a child logger for every request).
 */
export function accessLog(logger: Logger, options: { quietPrefixes: readonly string[] }): RequestHandler {
  return (req, res, next) => {
    // Not even errors are logged (a silent hub): nothing to measure, no listener to add.
    if (!logger.isLevelEnabled('error')) return next();
    const started = process.hrtime.bigint();
    const log = (aborted: boolean) => {
      const level = res.statusCode >= 500 ? 'error' : options.quietPrefixes.some((prefix) => req.originalUrl.startsWith(prefix)) ? 'debug' : 'info';
      if (!logger.isLevelEnabled(level)) return;
      const durationMs = Number(process.hrtime.bigint() - started) / 1e6;
      logger[level](
        {
          req: {
            id: res.locals.requestId as string,
            method: req.method,
            url: redactSecretQueryValues(req.originalUrl),
            remote_address: req.socket.remoteAddress,
          },
          res: { status: res.statusCode },
          route: (res.locals.route as string | undefined) ?? null,
          response_time_ms: Math.round(durationMs),
          ...(aborted ? { aborted: true } : {}),
        },
        requestLine(req, res, aborted ? undefined : durationMs),
      );
    };
    // One listener, not two `once`s (each a wrapper and a bound function per request): a response
    // always ends in 'close', finished or not (not finished: the client went away first).
    res.on('close', () => log(!res.writableFinished));
    next();
  };
}

/** `POST /api/v1/sessions/{id}/messages 202 3 ms`: the template, not the ids, names the endpoint. */
export function requestLine(req: IncomingMessage | Request, res: ServerResponse | Response, durationMs: number | undefined): string {
  // An unmatched request's raw path is shown: a bot token someone put in it is cut out too.
  const route =
    ((res as Response).locals?.route as string | undefined) ?? redactSecretQueryValues(((req as Request).originalUrl ?? req.url ?? '').split('?')[0]!);
  return `${req.method} ${route} ${durationMs === undefined ? 'aborted' : `${res.statusCode} ${Math.round(durationMs)} ms`}`;
}
