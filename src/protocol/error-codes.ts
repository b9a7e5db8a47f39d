/**
 * The one closed set of error codes, each with the HTTP status it maps to on REST.
 *
 * Every code here is documented in docs/errors.md (test/core/errors.test.ts fails otherwise).
 * WebSocket `error` frames use the same codes; their HTTP status is what the REST equivalent returns.
 * Add a code only with its documentation. `AppError` (src/core/errors.ts) carries one; clients read
 * the same set (this module is shared by the server, the CLI and the Web UI).
 */
export const ERROR_STATUS = {
  BAD_REQUEST: 400,
  UNAUTHORIZED: 401,
  TOKEN_EXPIRED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  SESSION_NOT_FOUND: 404,
  CONFIRMATION_NOT_FOUND: 404,
  APPROVAL_NOT_FOUND: 404,
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
