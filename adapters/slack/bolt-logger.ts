import { LogLevel, type Logger as SlackLogger } from '@slack/bolt';
import type { Logger } from 'pino';

/** Bolt's and the Web API client's log lines, into our logger (they never include tokens). */
export function boltLogger(logger: Logger): SlackLogger {
  const child = logger.child({ component: 'slack' });
  let level = LogLevel.WARN;
  const line = (parts: unknown[]) =>
    parts.map((part) => (typeof part === 'string' ? part : part instanceof Error ? part.message : JSON.stringify(part))).join(' ');
  return {
    debug: (...parts) => child.debug(line(parts)),
    info: (...parts) => child.info(line(parts)),
    warn: (...parts) => child.warn(line(parts)),
    error: (...parts) => child.error(line(parts)),
    setLevel: (next) => void (level = next),
    getLevel: () => level,
    setName: () => undefined,
  };
}
