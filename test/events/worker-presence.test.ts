import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { RedisWorkerPresence } from '../../src/events/worker-presence';
import { createLogger } from '../../src/logs/logger';
import { createRedis } from '../../src/redis/connection';
import { InProcessEventLog } from '../../src/events/in-process-event-log';
import { InProcessTurnRegistry } from '../../src/events/in-process-turn-registry';
import { PickupWatch } from '../../src/turns/pickup-watch';
import { LogCapture } from '../helpers/log-capture';
import { REPO_ROOT } from '../helpers/process';
import { TEST_REDIS_URL, deleteKeys, uniquePrefix } from '../helpers/redis';

/**
 * "All N workers are busy" (the pickup note) and readiness count the workers alive. A worker
 * process that was killed went on counting until its heartbeat expired (15 s): the note said two
 * workers were busy when one was dead (issue 25). A killed process's Redis connections close with
 * it, and a worker counts only while its presence connection is open.
 */
const logger = createLogger({ level: 'warn', format: 'json', name: 'test', destination: new LogCapture() });
const prefix = uniquePrefix('presence');
const redis = createRedis(TEST_REDIS_URL, logger, 'presence-test');
const presence = new RedisWorkerPresence(redis, prefix);

afterAll(async () => {
  redis.disconnect();
  await deleteKeys(prefix);
});

/** A worker process of its own (the built presence module), beating until it is SIGKILLed. */
function spawnBeatingWorker(workerId: string) {
  const script = `
    const { RedisWorkerPresence } = require(${JSON.stringify(path.join(REPO_ROOT, 'dist/src/events/worker-presence.js'))});
    const { Redis } = require('ioredis');
    const presence = new RedisWorkerPresence(new Redis(${JSON.stringify(TEST_REDIS_URL)}), ${JSON.stringify(prefix)});
    presence.beat(${JSON.stringify(workerId)}).then(() => console.log('beating'));
    setInterval(() => presence.beat(${JSON.stringify(workerId)}), 5000);
  `;
  const child = spawn(process.execPath, ['-e', script], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  const beating = new Promise<void>((resolve) => child.stdout!.on('data', (chunk: Buffer) => chunk.toString().includes('beating') && resolve()));
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  return { child, beating, exited };
}

/** Asks until `alive()` says `count` (Redis drops a dead client's connection as soon as its socket closes). */
async function aliveBecomes(count: number, withinMs: number): Promise<number> {
  const deadline = Date.now() + withinMs;
  let alive = await presence.alive();
  while (alive !== count && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    alive = await presence.alive();
  }
  return alive;
}

it('a killed worker stops counting at once, not when its heartbeat expires', async () => {
  const live = randomUUID();
  await presence.beat(live);
  const doomed = spawnBeatingWorker(randomUUID());
  await doomed.beating;
  expect(await presence.alive()).toBe(2);
  doomed.child.kill('SIGKILL');
  await doomed.exited;
  // Well inside the 15 s heartbeat timeout.
  expect(await aliveBecomes(1, 3_000)).toBe(1);

  // And the pickup note a client gets says so.
  const events = new InProcessEventLog();
  const registry = new InProcessTurnRegistry();
  const watch = new PickupWatch({ registry, events, workers: presence, logger }, { warnAfterMs: 0, sweepMs: 60_000 });
  const sessionId = randomUUID();
  const turnId = randomUUID();
  await registry.claim(sessionId, turnId);
  watch.watch(sessionId, turnId);
  await watch.sweep();
  const replay = await events.replay(sessionId, -1);
  expect(replay.frames[0]?.payload).toMatchObject({ code: 'WORKER_UNAVAILABLE', message: expect.stringContaining('all 1 worker(s) are busy') });
  await events.close();
  await presence.leave(live);
  expect(await presence.alive()).toBe(0);
}, 30_000);
