import { removeTempDirs } from '../helpers/temp-dir';
import { scaled } from './scale';
import { ResilientSession } from './support/chaos-client';
import { ChaosCluster, sleep } from './support/chaos-cluster';
import { verifyTurns, type SentTurn } from './support/chaos-checks';
import { turnMarker } from './support/chaos-model';

/**
 * Chaos, part 2 (issue 19 §3): the hub's dependencies and an API process fail under load. Two API
 * processes and two workers on PostgreSQL (through a cuttable proxy) and a Redis of the test's own;
 * client sessions keep sending turns (every fourth with a side effect) through:
 *
 * 1. Redis restarted (SIGTERM, down, started again on the same port; it keeps its data: AOF);
 * 2. PostgreSQL gone for 10 s (the short run: 4 s): every connection cut, new ones refused;
 * 3. the API process holding the most sockets SIGKILLed (then started again).
 *
 * After each: every session finishes a turn sent after the fault healed (that time is the recovery
 * time), and at the end nothing accepted is lost, answered twice or run twice, every turn ended in
 * `done` or a terminal `error`, and every client saw each frame once, in order (reconnecting and
 * replaying with `last_seq` when its socket dropped).
 */
const SESSIONS = scaled(4, 8);
const PG_OUTAGE_MS = scaled(4_000, 10_000);
const REDIS_DOWN_MS = 1_000;

let cluster: ChaosCluster;
const sessions: ResilientSession[] = [];

beforeAll(async () => {
  cluster = new ChaosCluster({ apis: 2, workers: 2 });
  await cluster.start();
}, 90_000);

afterAll(async () => {
  await cluster?.tearDown(sessions);
  removeTempDirs();
});

it(
  'Redis restarted, PostgreSQL gone for a while, an API process killed, all under load: nothing accepted is lost, clients replay',
  async () => {
    for (let index = 0; index < SESSIONS; index += 1) {
      await cluster.openSession(sessions);
    }
    const sent: SentTurn[] = [];
    /** Per session: when its last turn ended (to see every session go on after a fault). */
    const ended: number[] = sessions.map(() => 0);
    let running = true;
    const load = sessions.map(async (session, index) => {
      for (let turn = 0; running; turn += 1) {
        const key = `s${index}n${turn}`;
        const tool = turn % 4 === 3;
        if (tool) cluster.model.sideEffect(key, cluster.effects.command(key));
        const entry: SentTurn = { session, key, turnId: null, tool };
        sent.push(entry);
        entry.turnId = await session.send(`Go on ${turnMarker(key)}`, 90_000);
        if (entry.turnId) await session.turnEnd(entry.turnId, 120_000);
        ended[index] = Date.now();
      }
    });

    /** Waits until every session ended a turn it sent after `since`; returns how long that took from `since`. */
    async function everyoneMovesOn(since: number): Promise<number> {
      const deadline = Date.now() + 90_000;
      // A turn that ended after `since` may have been sent before it: two more ends make sure one was sent after.
      const counts = sessions.map((session) => session.frames.filter((frame) => frame.type === 'done' && frame.at > since).length);
      while (sessions.some((session, index) => session.frames.filter((frame) => frame.type === 'done' && frame.at > since).length < counts[index]! + 2)) {
        if (Date.now() > deadline) throw new Error('the sessions did not go on after the fault');
        await sleep(50);
      }
      return Math.max(...ended) - since;
    }

    const recovery: Record<string, number> = {};
    let held = 0;
    try {
      await sleep(1_500);
      // 1. Redis restarts.
      await cluster.redis.restart(REDIS_DOWN_MS);
      recovery.redis = await everyoneMovesOn(Date.now());

      // 2. PostgreSQL goes away, then comes back.
      await cluster.proxy.cut();
      await sleep(PG_OUTAGE_MS);
      await cluster.proxy.restore();
      recovery.postgres = await everyoneMovesOn(Date.now());

      // 3. The API process holding the most sockets dies with them; it is started again.
      const holding = cluster.apiUrls.map((url) => sessions.filter((session) => session.connectedTo === url).length);
      const victim = holding.indexOf(Math.max(...holding));
      held = holding[victim]!;
      await cluster.kill(cluster.apis[victim]!);
      const killedAt = Date.now();
      recovery.api = await everyoneMovesOn(killedAt);
      await cluster.startApi(victim);
    } finally {
      running = false;
      await Promise.all(load);
    }
    await sleep(500);
    for (const session of sessions) session.close();

    const verdict = await verifyTurns(cluster.databaseUrl, sent, cluster.effects);
    const reconnects = sessions.reduce((sum, session) => sum + session.reconnects, 0);
    // An outage is a 503 with Retry-After (the clients send again), never a 500.
    const unavailable = cluster.answered(503).length;
    const internal = cluster.answered(500);
    console.log(
      [
        `chaos (infrastructure): ${verdict.turns} turns, ${verdict.done} done, ${verdict.errors.length} ended in error ${JSON.stringify(verdict.errors)}`,
        `  sessions going on after the fault (ms): Redis restart ${recovery.redis}, PostgreSQL back after ${PG_OUTAGE_MS} ms ${recovery.postgres}, API process killed ${recovery.api}`,
        `  the killed API process held ${held} of ${SESSIONS} sockets; client reconnects ${reconnects}; side-effect calls ${cluster.effects.hits.length}`,
        `  answers 503 (service unavailable) ${unavailable}, 500 ${internal.length}`,
      ].join('\n'),
    );
    expect(verdict.failures).toEqual([]);
    expect(internal.slice(0, 5)).toEqual([]);
    expect(held).toBeGreaterThan(0);
    expect(reconnects).toBeGreaterThanOrEqual(held); // the killed API process's sockets came back elsewhere
  },
  scaled(150_000, 600_000),
);
