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
  res.status(status).json(body);
}

export function sendError(res: Response, error: AppError): void {
  for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
  const body: Envelope<never> = {
    data: null,
    error: { code: error.code, message: error.message, details: error.details },
    meta: meta(res),
  };
  res.status(error.status).json(body);
}
