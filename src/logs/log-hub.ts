import type { Redis } from 'ioredis';
import type { LogLine, StreamLevel } from '../protocol/log-lines';
import { redisKey } from '../redis/connection';

// The log stream's line and levels are part of the wire protocol (src/protocol/log-lines.ts).
export { STREAM_LEVELS, type LogLine, type StreamLevel } from '../protocol/log-lines';

const FROM_PINO: Record<string, StreamLevel> = {
  trace: 'DEBUG',
  debug: 'DEBUG',
  info: 'INFO',
  warn: 'WARNING',
  error: 'ERROR',
  fatal: 'ERROR',
};

export const LOG_HUB_DEFAULTS = {
  /** With Redis: how often a process checks whether any process has a log socket open. */
  listenerCheckIntervalMs: 2_000,
} as const;

/**
 * Fans the process's log lines out to admin log sockets. It is a pino destination; lines are parsed
 * only while someone listens, so an idle log stream costs nothing. With Redis, every process
 * publishes its lines on one channel (only while some process subscribes) and every API process
 * delivers the channel to its sockets, so one socket sees all processes.
 */
export class LogHub {
  private readonly listeners = new Set<(line: LogLine) => void>();
  private redis: { commands: Redis; subscriber: Redis; channel: string } | null = null;
  private othersListening = false;
  private checkTimer: NodeJS.Timeout | null = null;
  private subscribed = false;

  constructor(private readonly processName: string) {}

  /** pino calls this with every serialised line (the hub is a DestinationStream). */
  write(text: string): void {
    const local = this.listeners.size > 0 && !this.redis;
    const publish = this.redis !== null && this.othersListening;
    if (!local && !publish) return;
    const line = this.toLogLine(text);
    if (!line) return;
    if (local) for (const listener of this.listeners) listener(line);
    // Errors here are dropped on purpose: logging them would feed this very stream.
    if (publish) this.redis!.commands.publish(this.redis!.channel, JSON.stringify(line)).catch(() => undefined);
  }

  /** Switches to the cross-process mode. `subscriber` is a connection in subscriber mode. */
  useRedis(commands: Redis, subscriber: Redis, prefix: string): void {
    const channel = redisKey(prefix, 'logs');
    this.redis = { commands, subscriber, channel };
    subscriber.on('message', (from: string, message: string) => {
      if (from !== channel) return;
      const line = JSON.parse(message) as LogLine;
      for (const listener of this.listeners) listener(line);
    });
    const check = async () => {
      const result = (await commands.pubsub('NUMSUB', channel).catch(() => [channel, 0])) as [string, number];
      this.othersListening = Number(result[1]) > 0;
    };
    void check();
    this.checkTimer = setInterval(() => void check(), LOG_HUB_DEFAULTS.listenerCheckIntervalMs);
    this.checkTimer.unref();
  }

  async listen(listener: (line: LogLine) => void): Promise<() => void> {
    this.listeners.add(listener);
    if (this.redis && !this.subscribed) {
      this.subscribed = true;
      await this.redis.subscriber.subscribe(this.redis.channel);
      this.othersListening = true; // this process listens now; do not wait for the next check
    }
    return () => {
      this.listeners.delete(listener);
      if (this.redis && this.listeners.size === 0 && this.subscribed) {
        this.subscribed = false;
        void this.redis.subscriber.unsubscribe(this.redis.channel).catch(() => undefined);
      }
    };
  }

  close(): void {
    if (this.checkTimer) clearInterval(this.checkTimer);
    this.listeners.clear();
  }

  private toLogLine(text: string): LogLine | null {
    try {
      const entry = JSON.parse(text) as { level?: string; msg?: string; time?: string; name?: string; pid?: number };
      return {
        type: 'log_line',
        level: FROM_PINO[entry.level ?? 'info'] ?? 'INFO',
        logger: `${entry.name ?? this.processName}:${entry.pid ?? process.pid}`,
        message: entry.msg ?? '',
        timestamp: entry.time ?? new Date().toISOString(),
      };
    } catch {
      return null;
    }
  }
}
