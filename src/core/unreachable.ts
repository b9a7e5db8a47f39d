/**
 * Whether an error says a backing service (the database, Redis) cannot be reached right now, as
 * opposed to a fault in the request or in our code: a request that met it is answered 503 with
 * `Retry-After` (SERVICE_UNAVAILABLE), not 500, so clients and load balancers retry.
 *
 * Recognised by shape, from the libraries' own errors: Sequelize's connection errors, node-postgres's
 * dropped connections and PostgreSQL's "shutting down / not accepting connections" SQLSTATEs (08xxx,
 * 57P01–57P03), ioredis's closed connection and exhausted retries, and the socket errno codes under
 * any of them (Sequelize keeps the driver's error as `parent`/`original`, others as `cause`).
 */
const SEQUELIZE_CONNECTION_ERRORS = new Set([
  'SequelizeConnectionError',
  'SequelizeConnectionRefusedError',
  'SequelizeConnectionAcquireTimeoutError',
  'SequelizeConnectionTimedOutError',
  'SequelizeHostNotFoundError',
  'SequelizeHostNotReachableError',
]);
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTCONN']);
const POSTGRES_UNAVAILABLE = /^(08...|57P0[123])$/;
const MESSAGES = [
  /^Connection terminated( unexpectedly)?$/,
  /^Connection is closed\.?$/,
  /^timeout exceeded when trying to connect$/i,
  /Reached the max retries per request limit/,
];

interface Shaped {
  name?: unknown;
  code?: unknown;
  message?: unknown;
  parent?: unknown;
  original?: unknown;
  cause?: unknown;
}

export function isBackingServiceUnreachable(error: unknown, depth = 0): boolean {
  if (depth > 4 || typeof error !== 'object' || error === null) return false;
  const shaped = error as Shaped;
  if (typeof shaped.name === 'string' && (SEQUELIZE_CONNECTION_ERRORS.has(shaped.name) || shaped.name === 'MaxRetriesPerRequestError')) return true;
  if (typeof shaped.code === 'string' && (SOCKET_CODES.has(shaped.code) || POSTGRES_UNAVAILABLE.test(shaped.code))) return true;
  if (typeof shaped.message === 'string' && MESSAGES.some((pattern) => pattern.test(shaped.message as string))) return true;
  return [shaped.parent, shaped.original, shaped.cause].some((inner) => inner !== error && isBackingServiceUnreachable(inner, depth + 1));
}
