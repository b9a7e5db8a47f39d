import type { Response } from 'express';
import type { AppError } from '../core/errors';

/**
 * The response envelope of every JSON response (decisions.md §1):
 * success `{data, error: null, meta}`, failure `{data: null, error: {code, message, details}, meta}`.
 */
export interface Meta {
  request_id: string;
  timestamp: string;
}

export interface Envelope<T> {
  data: T | null;
  error: { code: string; message: string; details: Record<string, unknown> } | null;
  meta: Meta;
}

export function requestIdOf(res: Response): string {
  return res.locals.requestId as string;
}

function meta(res: Response): Meta {
  return { request_id: requestIdOf(res), timestamp: new Date().toISOString() };
}

export function sendData<T>(res: Response, status: number, data: T): void {
  const body: Envelope<T> = { data, error: null, meta: meta(res) };
  writeJson(res, status, body);
}

/**
 * Writes a JSON body straight to the response: what express's `res.json` → `res.send` would write
 * here (no ETag, no freshness: API answers are not cached by validators; app.ts), without its
 * per-call content negotiation. Node leaves the body out of HEAD answers; 204 has none.
 */
function writeJson(res: Response, status: number, body: unknown): void {
  res.statusCode = status;
  if (status === 204) {
    res.end();
    return;
  }
  const json = JSON.stringify(body);
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(json));
  res.end(json);
}

export function sendError(res: Response, error: AppError): void {
  for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
  const body: Envelope<never> = {
    data: null,
    error: { code: error.code, message: error.message, details: error.details },
    meta: meta(res),
  };
  writeJson(res, error.status, body);
}
