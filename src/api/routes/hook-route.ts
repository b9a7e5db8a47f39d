import express, { type RequestHandler } from 'express';
import { HOOK_DEFAULTS, type EventService } from '../../triggers/event-service';
import { sendData } from '../envelope';

/** Where hooks are mounted, under the API prefix: `POST /api/v1/hooks/{workflow}/{hook}`. */
export const HOOKS_PATH = '/hooks';

const HOOK_PATH = /^\/([a-z0-9][a-z0-9_-]{0,63})\/([a-z0-9][a-z0-9_-]{0,63})\/?$/;

/**
 * The hook endpoint, mounted before the JSON parser (signatures are over the raw bytes): a body of
 * any type up to 1 MiB (413 above), then EventService decides. Anything else under `/hooks`
 * (`GET /hooks/deliveries`) passes on to the API router.
 */
export function hookRoute(service: () => EventService | null): RequestHandler {
  const raw = express.raw({ type: () => true, limit: HOOK_DEFAULTS.maxBodyBytes });
  return (req, res, next) => {
    const match = req.method === 'POST' ? HOOK_PATH.exec(req.path) : null;
    if (!match) return next();
    raw(req, res, (error?: unknown) => {
      if (error) return next(error);
      const events = service();
      if (!events) return next(new Error('the events service is not started'));
      const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      events
        .receive(match[1]!, match[2]!, req.headers, body)
        .then((answer) => sendData(res, answer.status, { delivery_id: answer.deliveryId, redelivery: answer.status === 200 }))
        .catch(next);
    });
  };
}
