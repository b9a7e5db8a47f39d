import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { Client } from 'pg';
import { spawnNode, type Child } from './child';
import { benchEnv, createSessions, registerUser } from './hub';
import { processCpuSeconds } from './proc-cpu';
import { BENCH_REDIS_URL, createPostgresDatabase, deleteRedisKeys, uniquePrefix, type ThrowAwayDatabase } from './stores';

/** What a benchmark can measure from outside: the processes, where to connect, how to get sessions. */
export interface HubUnderTest {
  label: string;
  /** http://127.0.0.1:<port> */
  base: string;
  /** Headers every socket and request carries (the bearer token; none for the floor). */
  headers: Record<string, string>;
  /** `count` fresh sessions' socket URLs. */
  sessions(count: number): Promise<{ ids: string[]; urls: string[] }>;
  /** CPU seconds used so far by every process serving the hub, by part (api, worker, postgres, redis). */
  cpu(): Promise<Record<string, number>>;
  /**
   * `/metrics` of every hub process that serves them on a port of their own (with
   * `env: { SERVICE_METRICS_ENABLED: 'true', SERVICE_METRICS_PORT: '0' }`): the API first.
   */
  metricsUrls: string[];
  /**
   * With the model over HTTP: the model server's own times (ms, request arrival → first event) since
   * the last call, which clears them; with the in-process model none.
   */
  modelTimes(): Promise<number[]>;
  /**
   * With the model over HTTP: each request's arrival and first event at the model server since the
   * last call, which clears them, as wall-clock ms (`performance.timeOrigin + performance.now()`).
   */
  modelMarks(): Promise<[number, number][]>;
  /** The API process and, when separate, the worker processes (for SIGKILL tests). */
  children: Child[];
  /** With the model over HTTP: the model server's process (its CPU is not the hub's, but it shares the machine's cores). */
  modelServerPid?: number;
  /** Scaled only: starts one more worker process (it joins `children`). */
  addWorker(): Promise<Child>;
  dataDir: string;
  env: Record<string, string>;
  stop(): Promise<void>;
}

export interface HubProcessOptions {
  /** `express`: a bare express route (the REST baseline); `floor`: bench/lib/floor-entry.ts. */
  variant: 'express' | 'floor' | 'embedded' | 'scaled';
  answerTokens?: number;
  tokenDelayMs?: number;
  /** Worker processes of the scaled variant (default 1). */
  workers?: number;
  env?: Record<string, string>;
  /** Every hub process writes a V8 CPU profile here when it exits (`--cpu-prof`). */
  profileDir?: string;
  /**
   * Where the hub's model is: `in-process` (FixedAnswerProvider, the floor of the hub's own cost) or
   * reached over HTTP through the real `openai` / `anthropic` provider, against the fake vendor
   * server of the tests in a process of its own (bench/lib/model-server-entry.ts). Default in-process.
   */
  model?: BenchModel;
}

export type BenchModel = 'in-process' | 'openai' | 'anthropic';
export const BENCH_MODELS: readonly BenchModel[] = ['in-process', 'openai', 'anthropic'];

/**
 * The models a run covers: BENCH_MODELS=in-process,openai (default all three), so a quick run can
 * leave a path out. The in-process model is always kept: the real paths are compared with it.
 */
export function benchModels(): BenchModel[] {
  const listed = (process.env.BENCH_MODELS ?? BENCH_MODELS.join(',')).split(',').map((name) => name.trim());
  const unknown = listed.filter((name) => !BENCH_MODELS.includes(name as BenchModel));
  if (unknown.length > 0) throw new Error(`BENCH_MODELS: unknown ${unknown.join(', ')} (known: ${BENCH_MODELS.join(', ')})`);
  return BENCH_MODELS.filter((model) => model === 'in-process' || listed.includes(model));
}

/** `embedded`, `embedded/openai`: a hub's label in logs and metric names. */
export function hubLabel(variant: string, model: BenchModel = 'in-process'): string {
  return model === 'in-process' ? variant : `${variant}/${model}`;
}

/** The fake vendor server in a process of its own; the hub's environment that points the provider at it. */
async function startModelServer(
  model: 'openai' | 'anthropic',
  tokens: Record<string, string>,
  cwd: string,
): Promise<{ child: Child; env: Record<string, string>; timesUrl: string }> {
  const child = spawnNode(path.join(__dirname, 'model-server-entry.js'), { ...tokens, BENCH_MODEL_VENDOR: model }, cwd);
  let output = '';
  const [url, timesPort] = await new Promise<[string, string]>((resolve, reject) => {
    child.process.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /bench model ready (\S+) times (\d+)\n/.exec(output);
      if (match) resolve([match[1]!, match[2]!]);
    });
    child.waitFor('bench model ready').catch(reject);
  });
  // Provider settings as an operator gives them; a short silence limit would only hide a stalled stream.
  return {
    child,
    env: { SERVICE_LLM_PROVIDER: model, SERVICE_LLM_BASE_URL: url, SERVICE_LLM_MODEL: `bench-${model}`, SERVICE_LLM_API_KEY: 'bench-key' },
    timesUrl: `http://127.0.0.1:${timesPort}/`,
  };
}

const READY = /bench (?:hub|floor) ready (\d+)(?: metrics (\d+))?\n/;

async function startChild(
  entry: string,
  env: Record<string, string>,
  cwd: string,
  nodeArguments: string[],
): Promise<{ child: Child; port: number; metricsPort: number | null }> {
  const child = spawnNode(path.join(__dirname, entry), env, cwd, nodeArguments);
  let output = '';
  const [port, metricsPort] = await new Promise<[number, number | null]>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = READY.exec(output);
      if (!match) return;
      child.process.stdout!.off('data', onData);
      resolve([Number(match[1]), match[2] === undefined ? null : Number(match[2])]);
    };
    child.process.stdout!.on('data', onData);
    child.waitFor('ready', 60_000).catch(reject);
  });
  return { child, port, metricsPort };
}

/** Starts the floor program, the embedded hub, or the scaled hub (API + worker processes, PostgreSQL, Redis). */
export async function startHubProcess(options: HubProcessOptions): Promise<HubUnderTest> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), `switchboard-bench-${options.variant}-`));
  const model = { BENCH_ANSWER_TOKENS: String(options.answerTokens ?? 20), BENCH_TOKEN_DELAY_MS: String(options.tokenDelayMs ?? 0) };
  const children: Child[] = [];
  // BENCH_NODE_ARGS adds Node flags to every hub process (e.g. `--trace-gc` to see pauses).
  const extra = (process.env.BENCH_NODE_ARGS ?? '').split(/\s+/).filter(Boolean);
  const nodeArguments = [...extra, ...(options.profileDir ? ['--cpu-prof', `--cpu-prof-dir=${options.profileDir}`] : [])];
  let database: ThrowAwayDatabase | null = null;
  let modelServer: Child | null = null;
  const prefix = uniquePrefix(options.variant);
  const cleanup = async () => {
    await Promise.all(children.map((child) => child.stop()));
    await modelServer?.stop();
    await database?.drop();
    if (options.variant === 'scaled') await deleteRedisKeys(prefix);
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    if (options.variant === 'floor' || options.variant === 'express') {
      const { child, port } = await startChild(options.variant === 'floor' ? 'floor-entry.js' : 'express-entry.js', { ...model }, dataDir, nodeArguments);
      children.push(child);
      const base = `http://127.0.0.1:${port}`;
      return {
        label: options.variant,
        base,
        headers: {},
        metricsUrls: [],
        children,
        dataDir,
        env: {},
        addWorker: () => Promise.reject(new Error(`${options.variant} has no separate workers`)),
        modelTimes: () => Promise.resolve([]),
        modelMarks: () => Promise.resolve([]),
        sessions: async (count) => {
          const ids = Array.from({ length: count }, () => crypto.randomUUID());
          return { ids, urls: ids.map((id) => `ws://127.0.0.1:${port}/ws/v1/sessions/${id}`) };
        },
        cpu: async () => ({ [options.variant]: processCpuSeconds(child.process.pid!) }),
        stop: cleanup,
      };
    }
    // BENCH_METRICS=1: every hub of the run counts metrics (each process on a port of its own), to
    // measure what metrics cost (`npm run bench -- turn-cost` with and without it).
    const metrics: Record<string, string> =
      process.env.BENCH_METRICS === '1'
        ? { SERVICE_METRICS_ENABLED: 'true', SERVICE_METRICS_PORT: '0', SERVICE_METRICS_TOKEN: 'bench-metrics-token-0123456789' }
        : {};
    let extra: Record<string, string> = { ...metrics, ...options.env };
    let modelTimesUrl: string | null = null;
    if (options.model && options.model !== 'in-process') {
      const server = await startModelServer(options.model, model, dataDir);
      modelServer = server.child;
      modelTimesUrl = server.timesUrl;
      extra = { ...extra, ...server.env };
    }
    if (options.variant === 'scaled') {
      database = await createPostgresDatabase();
      extra = {
        ...extra,
        SERVICE_DATABASE_URL: database.url,
        SERVICE_REDIS_URL: BENCH_REDIS_URL,
        SERVICE_REDIS_PREFIX: prefix,
        SERVICE_EMBEDDED_WORKER: 'false',
      };
    }
    const env = { ...benchEnv(dataDir, extra), ...model };
    const api = await startChild('hub-entry.js', env, dataDir, nodeArguments);
    children.push(api.child);
    const metricsUrls = api.metricsPort === null ? [] : [`http://127.0.0.1:${api.metricsPort}/metrics`];
    const addWorker = async (): Promise<Child> => {
      if (options.variant !== 'scaled') throw new Error('only the scaled hub has separate workers');
      const worker = await startChild('hub-entry.js', { ...env, BENCH_ROLE: 'worker' }, dataDir, nodeArguments);
      children.push(worker.child);
      if (worker.metricsPort !== null) metricsUrls.push(`http://127.0.0.1:${worker.metricsPort}/metrics`);
      return worker.child;
    };
    for (let index = 0; index < (options.variant === 'scaled' ? (options.workers ?? 1) : 0); index += 1) await addWorker();
    const base = `http://127.0.0.1:${api.port}`;
    const user = await registerUser(`${base}/api/v1`);
    const headers = { authorization: `Bearer ${user.token}` };
    const redis = options.variant === 'scaled' ? new Redis(BENCH_REDIS_URL, { maxRetriesPerRequest: 1 }) : null;
    const redisPid = redis ? Number(/process_id:(\d+)/.exec(await redis.info('server'))?.[1]) : 0;
    const postgresPids = async (): Promise<number[]> => {
      if (!database) return [];
      const client = new Client({ connectionString: database.url });
      await client.connect();
      try {
        const result = await client.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()');
        return result.rows.map((row) => row.pid);
      } finally {
        await client.end();
      }
    };
    return {
      label: hubLabel(options.variant, options.model),
      base,
      headers,
      metricsUrls,
      children,
      dataDir,
      env,
      addWorker,
      ...(modelServer?.process.pid ? { modelServerPid: modelServer.process.pid } : {}),
      modelTimes: async () => (modelTimesUrl ? ((await (await fetch(modelTimesUrl)).json()) as number[]) : []),
      modelMarks: async () => (modelTimesUrl ? ((await (await fetch(new URL('marks', modelTimesUrl))).json()) as [number, number][]) : []),
      sessions: async (count) => {
        const ids = await createSessions(`${base}/api/v1`, user.token, count);
        return { ids, urls: ids.map((id) => `ws://127.0.0.1:${api.port}/ws/v1/sessions/${id}`) };
      },
      cpu: async () => {
        const parts: Record<string, number> = { api: processCpuSeconds(api.child.process.pid!) };
        const workers = children.slice(1);
        if (workers.length > 0) parts.worker = workers.reduce((sum, child) => sum + processCpuSeconds(child.process.pid!), 0); // a killed one counts 0
        if (database) parts.postgres = (await postgresPids()).reduce((sum, pid) => sum + processCpuSeconds(pid), 0);
        if (redisPid) parts.redis = processCpuSeconds(redisPid);
        return parts;
      },
      stop: async () => {
        redis?.disconnect();
        await cleanup();
      },
    };
  } catch (error) {
    await cleanup();
    throw error;
  }
}

/** CPU seconds used between two readings, by part, and their sum under `total`. */
export function cpuDelta(before: Record<string, number>, after: Record<string, number>): Record<string, number> {
  const delta: Record<string, number> = {};
  let total = 0;
  for (const [part, seconds] of Object.entries(after)) {
    delta[part] = seconds - (before[part] ?? 0);
    total += delta[part]!;
  }
  return { ...delta, total };
}
