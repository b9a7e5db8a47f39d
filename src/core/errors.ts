// The closed set of codes is part of the wire protocol (src/protocol/error-codes.ts): clients read it too.
import { ERROR_STATUS, type ErrorCode } from '../protocol/error-codes';
import { isBackingServiceUnreachable } from './unreachable';

export { ERROR_CODES, ERROR_STATUS, type ErrorCode } from '../protocol/error-codes';

/** One entry of `details.fields[name]` on a 422. */
export interface FieldIssue {
  code: string;
  message: string;
}

export type FieldIssues = Record<string, FieldIssue[]>;

export interface AppErrorOptions {
  /** Machine-readable extra information, returned to the client as `error.details`. */
  details?: Record<string, unknown>;
  /** Response headers the error implies (`Retry-After`, `Allow`, …). */
  headers?: Record<string, string>;
  /** The underlying error; logged, never sent to the client. */
  cause?: unknown;
}

/**
 * The one error class of the service. `message` must be safe to show to a client:
 * never put a secret, a stack trace or a raw upstream error text in it (use `cause`).
 */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details: Record<string, unknown>;
  readonly headers: Record<string, string>;

  constructor(code: ErrorCode, message: string, options: AppErrorOptions = {}) {
    // A refusal (4xx) is an answer, not a fault: no stack is captured for it (a busy REST endpoint
    // answers thousands of 409s a second). 5xx keep their stack for the log.
    const stackLimit = Error.stackTraceLimit;
    if (ERROR_STATUS[code] < 500) Error.stackTraceLimit = 0;
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    Error.stackTraceLimit = stackLimit;
    this.name = 'AppError';
    this.code = code;
    this.status = ERROR_STATUS[code];
    this.details = options.details ?? {};
    this.headers = options.headers ?? {};
  }

  /** A 422 with `details.fields = {field: [{code, message}]}`. */
  static validation(fields: FieldIssues, message = 'The request is not valid.'): AppError {
    return new AppError('VALIDATION_ERROR', message, { details: { fields } });
  }

  /**
   * Wraps anything thrown into an AppError: a database or Redis that cannot be reached is a 503
   * SERVICE_UNAVAILABLE with Retry-After (the request can simply be sent again); anything else
   * unknown is INTERNAL_ERROR with a generic message.
   */
  static from(error: unknown): AppError {
    if (error instanceof AppError) return error;
    if (isBackingServiceUnreachable(error)) {
      return new AppError('SERVICE_UNAVAILABLE', 'A service the hub depends on cannot be reached right now; try again in a moment.', {
        headers: { 'Retry-After': String(BACKING_SERVICE_RETRY_AFTER_S) },
        cause: error,
      });
    }
    return new AppError('INTERNAL_ERROR', 'An internal error occurred.', { cause: error });
  }
}

/** Retry-After of a 503 for a database or Redis that cannot be reached (a restart or failover takes seconds). */
export const BACKING_SERVICE_RETRY_AFTER_S = 2;

export function isAppError(error: unknown): error is AppError {
  return error instanceof AppError;
}
