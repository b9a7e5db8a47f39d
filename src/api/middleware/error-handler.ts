import type { ErrorRequestHandler, RequestHandler } from 'express';
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

/** Maps anything thrown to the envelope; never sends a stack trace or an internal message. */
export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (error: unknown, req, res, next) => {
    if (res.headersSent) {
      next(error);
      return;
    }
    const known =
      error instanceof AppError
        ? error
        : (typeof error === 'object' && error !== null && fromBodyParser(error as Record<string, unknown>)) ||
          AppError.from(error);
    if (known.status >= 500) {
      logger.error({ err: known.cause ?? known, request_id: res.locals.requestId, method: req.method, path: req.path }, known.message);
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
