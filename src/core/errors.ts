/**
 * The one closed set of error codes, each with the HTTP status it maps to on REST.
 *
 * Every code here is documented in docs/errors.md (test/core/errors.test.ts fails otherwise).
 * WebSocket `error` frames use the same codes; their HTTP status is what the REST equivalent returns.
 * Add a code only with its documentation.
 */
export const ERROR_STATUS = {
  BAD_REQUEST: 400,
  UNAUTHORIZED: 401,
  TOKEN_EXPIRED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  SESSION_NOT_FOUND: 404,
  CONFIRMATION_NOT_FOUND: 404,
  WORKFLOW_NOT_FOUND: 404,
  COLLECTION_NOT_FOUND: 404,
  DOCUMENT_NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  CONFLICT: 409,
  TURN_IN_PROGRESS: 409,
  CANCELLED: 409,
  INVALID_MESSAGE: 400,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  VALIDATION_ERROR: 422,
  SYSTEM_PROMPT_TOO_LONG: 422,
  RATE_LIMIT_EXCEEDED: 429,
  BUDGET_EXCEEDED: 429,
  INTERNAL_ERROR: 500,
  PROVIDER_UNREACHABLE: 502,
  PROVIDER_ERROR: 502,
  TOOL_EXPANSION_FAILED: 422,
  SERVICE_UNAVAILABLE: 503,
  WORKER_UNAVAILABLE: 503,
  SAML_NOT_CONFIGURED: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export const ERROR_CODES = Object.keys(ERROR_STATUS) as ErrorCode[];

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

  /** Wraps anything thrown into an AppError; unknown errors become INTERNAL_ERROR with a generic message. */
  static from(error: unknown): AppError {
    if (error instanceof AppError) return error;
    return new AppError('INTERNAL_ERROR', 'An internal error occurred.', { cause: error });
  }
}

export function isAppError(error: unknown): error is AppError {
  return error instanceof AppError;
}
