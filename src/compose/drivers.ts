import type { Redis } from 'ioredis';
import type { Config } from '../config';
import { InProcessControlBus } from '../events/in-process-control-bus';
import { InProcessEventLog } from '../events/in-process-event-log';
import { InProcessRenderLeases } from '../events/in-process-render-leases';
import { InProcessTurnRegistry } from '../events/in-process-turn-registry';
import { RedisControlBus } from '../events/redis-control-bus';
import { RedisEventLog } from '../events/redis-event-log';
import { RedisRenderLeases } from '../events/redis-render-leases';
import { RedisTurnRegistry } from '../events/redis-turn-registry';
import { InProcessWorkerPresence, RedisWorkerPresence } from '../events/worker-presence';
import type { LogHub } from '../logs/log-hub';
import type { Logger } from '../logs/logger';
import { redactUrlCredentials } from '../logs/redact';
import { InProcessTurnQueue } from '../queue/in-process-turn-queue';
import { createRedis } from '../redis/connection';
import type { Lifecycle } from '../server/lifecycle';
import type { ReadinessCheck } from '../server/readiness';
import type { Drivers } from './service-types';

/** In-process drivers without Redis (`npm start` needs nothing else); BullMQ + Streams + pub/sub with it. */
export async function createDrivers(
  config: Readonly<Config>,
  logger: Logger,
  lifecycle: Lifecycle,
  readiness: ReadinessCheck[],
  logHub: LogHub,
): Promise<Drivers> {
  const stopTimeoutMs = config.server.shutdown_timeout_s * 1000;
  if (!config.redis.url) {
    const drivers = {
      queue: new InProcessTurnQueue(logger),
      events: new InProcessEventLog(),
      control: new InProcessControlBus(),
      registry: new InProcessTurnRegistry(),
      presence: new InProcessWorkerPresence(),
      leases: new InProcessRenderLeases(),
    };
    lifecycle.onStop({ name: 'event bus', stop: async () => void (await Promise.all([drivers.events.close(), drivers.control.close()])) });
    lifecycle.onStop({ name: 'turn queue', stop: () => drivers.queue.close() });
    return { ...drivers, description: 'in-process (embedded)' };
  }
  const url = config.redis.url;
  const prefix = config.redis.prefix;
  // Commands sent in one tick go in one write (a turn's token appends, registry updates).
  const commands = createRedis(url, logger, 'commands', { autoPipelining: true });
  const subscriber = createRedis(url, logger, 'subscriber', { blocking: true });
  const bullmq = createRedis(url, logger, 'bullmq', { blocking: true });
  await reachRedis(url, [commands, subscriber], [commands, subscriber, bullmq]);
  await requireRedisVersion(url, commands, [commands, subscriber, bullmq]);
  const events = new RedisEventLog(commands, subscriber, prefix);
  logHub.useRedis(commands, subscriber, prefix);
  const control = new RedisControlBus(commands, subscriber, prefix);
  // Loaded only with Redis: bullmq would cost every embedded hub's start ~0.2 s (2-core machine).
  const { RedisTurnQueue } = require('../queue/redis-turn-queue') as typeof import('../queue/redis-turn-queue');
  const queue = new RedisTurnQueue(
    {
      connection: bullmq,
      prefix: `${prefix}:bull`,
      lockDurationMs: config.worker.turn_lock_s * 1000,
      stalledIntervalMs: config.worker.stalled_check_s * 1000,
      stopTimeoutMs,
    },
    logger,
  );
  lifecycle.onStop({
    name: 'redis',
    stop: async () => {
      await Promise.all([events.close(), control.close()]);
      commands.disconnect();
      subscriber.disconnect();
      bullmq.disconnect();
    },
  });
  lifecycle.onStop({ name: 'turn queue', stop: () => queue.close() });
  readiness.push({ name: 'redis', check: async () => void (await commands.ping()) });
  const registry = new RedisTurnRegistry(commands, prefix);
  const presence = new RedisWorkerPresence(commands, prefix);
  const leases = new RedisRenderLeases(commands, prefix);
  return { queue, events, control, registry, presence, leases, description: `BullMQ on Redis ${redactUrlCredentials(url)} (prefix "${prefix}")` };
}

/** The oldest Redis the hub runs on: the event log trims its streams with `XADD … MINID` (6.2). */
const MINIMUM_REDIS_VERSION = [6, 2] as const;

/** Refuses an older Redis at startup (it would fail only later, on a session's long stream), naming the version found. */
async function requireRedisVersion(url: string, commands: Redis, all: Redis[]): Promise<void> {
  const found = /^redis_version:(\d+)\.(\d+)/m.exec(await commands.info('server'));
  const [major, minor] = found ? [Number(found[1]), Number(found[2])] : [0, 0];
  const [wantMajor, wantMinor] = MINIMUM_REDIS_VERSION;
  if (found && (major > wantMajor || (major === wantMajor && minor >= wantMinor))) return;
  for (const redis of all) redis.disconnect();
  throw new Error(
    `Redis at ${redactUrlCredentials(url)} (SERVICE_REDIS_URL) is ${found ? `version ${major}.${minor}` : 'of an unknown version'}; the hub needs Redis ${wantMajor}.${wantMinor} or newer.`,
  );
}

/**
 * Startup's first Redis round trip. When it fails the message names the URL (password hidden) and
 * the way out; the connections are closed so nothing keeps retrying behind the error.
 */
async function reachRedis(url: string, probes: Redis[], all: Redis[]): Promise<void> {
  let lastError: string | null = null;
  // Commands ride out a short Redis restart (REDIS_COMMAND_RETRIES, ~5 s each); at startup the first
  // connection error is the answer, so a wrong URL fails at once instead of after every retry.
  let refused!: (error: Error) => void;
  const firstError = new Promise<never>((_resolve, reject) => (refused = reject));
  firstError.catch(() => undefined);
  const remember = (error: Error) => {
    lastError = error.message;
    refused(error);
  };
  for (const redis of probes) redis.on('error', remember);
  try {
    const pinged = Promise.all(probes.map((redis) => redis.ping()));
    pinged.catch(() => undefined); // lost the race: its rejection (the connections closed) is expected
    await Promise.race([pinged, firstError]);
  } catch (error) {
    for (const redis of all) redis.disconnect();
    const reason = lastError ?? (error instanceof Error ? error.message : String(error));
    throw new Error(
      `Redis at ${redactUrlCredentials(url)} (SERVICE_REDIS_URL) is unreachable: ${reason}. Start Redis there, correct the URL, or unset SERVICE_REDIS_URL to run with the in-process queue.`,
    );
  } finally {
    for (const redis of probes) redis.off('error', remember);
  }
}
