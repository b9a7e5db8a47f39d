import type { ErrorRequestHandler, RequestHandler } from 'express';
import { UniqueConstraintError } from 'sequelize';
import { AppError } from '../../core/errors';
import type { Logger } from '../../logs/logger';
import { sendError } from '../envelope';

/** body-parser signals its failures with `type`; each maps to one of our codes. */
function fromBodyParser(error: { type?: unknown; status?: unknown; limit?: unknown }): AppError | null {
  switch (error.type) {
    case 'entity.parse.failed':
      return new AppError('BAD_REQUEST', 'The request body is not valid JSON.', { cause: error });
    case 'entity.too.large':
      return new AppError('PAYLOAD_TOO_LARGE', `The request body is larger than ${error.limit} bytes.`, {
        details: { limit_bytes: error.limit },
        cause: error,
      });
    case 'charset.unsupported':
    case 'encoding.unsupported':
      return new AppError('UNSUPPORTED_MEDIA_TYPE', 'The request body charset or encoding is not supported.', { cause: error });
    case 'request.aborted':
    case 'request.size.invalid':
      return new AppError('BAD_REQUEST', 'The request body was incomplete.', { cause: error });
    default:
      return null;
  }
}

/**
 * Client errors raised below our code (the router, body-parser's decompression), recognised by
 * the `status`/`expose` that http-errors gives them, so they answer 4xx instead of 500.
 */
function fromRequestParsing(error: { status?: unknown; expose?: unknown; code?: unknown }): AppError | null {
  if (error instanceof URIError || (error.status === 400 && error instanceof Error && error.message.startsWith('Failed to decode param'))) {
    return new AppError('BAD_REQUEST', 'The request path contains invalid percent-encoding.', { cause: error });
  }
  if (typeof error.code === 'string' && error.code.startsWith('Z_')) {
    return new AppError('BAD_REQUEST', 'The request body could not be decompressed (it does not match its Content-Encoding).', { cause: error });
  }
  if (error.expose !== true) return null;
  if (error.status === 400) return new AppError('BAD_REQUEST', 'The request is malformed.', { cause: error });
  if (error.status === 413) return new AppError('PAYLOAD_TOO_LARGE', 'The request body is too large.', { cause: error });
  if (error.status === 415) return new AppError('UNSUPPORTED_MEDIA_TYPE', 'The request body charset or encoding is not supported.', { cause: error });
  return null;
}

/** Maps what the libraries below us throw for a client's mistake; null for a real failure. */
function fromLibrary(error: unknown): AppError | null {
  // Two requests creating the same unique thing at once: the database's constraint decided.
  if (error instanceof UniqueConstraintError) {
    return new AppError('CONFLICT', 'It exists already (another request created it at the same time).', { cause: error });
  }
  if (typeof error !== 'object' || error === null) return null;
  return fromBodyParser(error as Record<string, unknown>) ?? fromRequestParsing(error as Record<string, unknown>);
}

/** Maps anything thrown to the envelope; never sends a stack trace or an internal message. */
export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (error: unknown, req, res, next) => {
    if (res.headersSent) {
      next(error);
      return;
    }
    const known = error instanceof AppError ? error : (fromLibrary(error) ?? AppError.from(error));
    if (known.status >= 500) {
      logger.error({ err: known.cause ?? known, request_id: res.locals.requestId, method: req.method, path: req.baseUrl + req.path }, known.message);
    }
    sendError(res, known);
  };
}

/** The last handler: no route matched the path. */
export function notFound(): RequestHandler {
  return (req) => {
    throw new AppError('NOT_FOUND', `No such endpoint: ${req.method} ${req.path}`);
  };
}
