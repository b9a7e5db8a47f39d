import pino, { type DestinationStream, type Logger } from 'pino';
import pretty from 'pino-pretty';
import type { LogLevel } from '../config';
import { pathRedactor } from './path-redactor';
import { REDACTED, REDACTED_LOG_PATHS } from './redact';

export type { Logger } from 'pino';

export interface LoggerOptions {
  level: LogLevel;
  format: 'auto' | 'json' | 'pretty';
  /** Names the process in every line (`api`, `worker`); the admin log stream shows it as `logger`. */
  name: string;
  /** Where lines go; default stdout. Tests pass a capture stream. */
  destination?: DestinationStream;
  /** Further destinations that receive every line (e.g. the admin log stream's tap). */
  extraStreams?: DestinationStream[];
  /** Paths redacted besides REDACTED_LOG_PATHS (the channels' secret webhook headers). */
  redactPaths?: readonly string[];
  /** Fields added to every line (the active trace's `trace_id` when traces are on). */
  mixin?: () => Record<string, unknown>;
}

/** Structured logger: pretty in a terminal, JSON otherwise; secrets redacted by path. */
export function createLogger(options: LoggerOptions): Logger {
  const usePretty = options.format === 'pretty' || (options.format === 'auto' && process.stdout.isTTY === true);
  const primary: DestinationStream =
    options.destination ?? (usePretty ? pretty({ colorize: true, sync: true, ignore: 'pid,hostname' }) : pino.destination({ sync: false }));
  const streams = [primary, ...(options.extraStreams ?? [])];
  // pino's `redact` paths, compiled once (path-redactor.ts says why not pino's own): the line's
  // fields, after the mixin's, and a child logger's bindings (the root's are pid and hostname only).
  const redact = pathRedactor([...REDACTED_LOG_PATHS, ...(options.redactPaths ?? [])], REDACTED);
  const logger = pino(
    {
      name: options.name,
      level: options.level,
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }), log: redact },
      ...(options.mixin ? { mixin: options.mixin } : {}),
    },
    streams.length === 1 ? primary : pino.multistream(streams.map((stream) => ({ stream, level: 'trace' as const }))),
  );
  // A child's bindings are redacted too: pino gives children no bindings formatter of their own.
  const childOf = logger.child;
  logger.child = function redactedChild(this: Logger, bindings, childOptions) {
    return childOf.call(this, redact(bindings), childOptions);
  } as Logger['child'];
  return logger;
}
