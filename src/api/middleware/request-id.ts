import { randomUUID } from 'node:crypto';
import type { RequestHandler } from 'express';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Gives every request an id, returned as `X-Request-ID` and `meta.request_id`. A caller's own
 * `X-Request-ID` is kept when it is a UUID, so a trace can span services; anything else is replaced.
 */
export function requestId(): RequestHandler {
  return (req, res, next) => {
    const incoming = req.get('x-request-id');
    const id = incoming && UUID.test(incoming) ? incoming.toLowerCase() : randomUUID();
    res.locals.requestId = id;
    res.setHeader('X-Request-ID', id);
    next();
  };
}
