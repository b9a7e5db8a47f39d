import type { ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { GENEROUS_RATE_LIMITS } from '../../helpers/auth-service';
import { testEnv } from '../../helpers/env';
import { createTestPostgresDatabase, TEST_POSTGRES_URL, type TestPostgresDatabase } from '../../helpers/postgres';
import { readyUrl, spawnService, type ServiceProcess } from '../../helpers/process';
import { freePort, spawnRedisServer } from '../../helpers/redis-server';
import { jsonBody, request } from '../../helpers/http';
import { makeTempDir } from '../../helpers/temp-dir';
import { ResilientSession } from './chaos-client';
import { registerUser } from '../../helpers/users';
import { ChaosModel, EffectServer } from './chaos-model';
import { PgChaosProxy } from './chaos-proxy';

/**
 * A redis-server child of the test's own that can be restarted on the same port. `persistent`:
 * append-only file, fsync on every write, so a restart (SIGTERM, then a new server on the same
 * directory) keeps every key, as a production Redis with AOF does.
 */
export class ChaosRedis {
  private child: ChildProcess | null = null;
  readonly dir = makeTempDir('switchboard-redis-');
  port = 0;

  constructor(private readonly persistent = true) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    if (this.port === 0) this.port = await freePort();
    const args = ['--port', String(this.port), '--bind', '127.0.0.1', '--dir', this.dir, '--save', ''];
    args.push(...(this.persistent ? ['--appendonly', 'yes', '--appendfsync', 'always'] : ['--appendonly', 'no']));
    const child = await spawnRedisServer(args);
    this.child = child;
  }

  /** Stops the server (SIGTERM: it writes what it holds and exits), waits `downMs`, starts it again. */
  async restart(downMs: number): Promise<void> {
    await this.stop('SIGTERM');
    await sleep(downMs);
    await this.start();
  }

  async stop(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    const child = this.child;
    this.child = null;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill(signal);
    await exited;
  }
}

export interface ChaosClusterOptions {
  apis?: number;
  workers?: number;
  /** Extra config.yaml lines. */
  config?: string[];
  /** Extra environment for every hub process. */
  env?: Record<string, string>;
  /** Whether Redis keeps its data across a restart (default true). */
  persistentRedis?: boolean;
  /** Each process serves /metrics on a port of its own (METRICS_TOKEN). */
  metrics?: boolean;
  /** The API processes keep their rate-limit counters in the cluster's Redis (SERVICE_SHARED_STORE_URL). */
  sharedStore?: boolean;
  /** The fake model's pause between tokens (default 15 ms). */
  tokenDelayMs?: number;
}

/** The bearer token of every process's /metrics when `metrics` is on. */
export const METRICS_TOKEN = 'chaos-metrics-token-0123456789';

/**
 * The scaled-out hub for chaos: API processes (`dist/src/main.js`, no embedded worker) and worker
 * processes (`dist/src/worker-main.js`) on a throw-away PostgreSQL database reached through a
 * cuttable proxy, and a Redis of the test's own; the chaos model and the effect server run in the
 * test. Processes can be killed and started again at any time.
 */
export class ChaosCluster {
  readonly model: ChaosModel;
  readonly effects = new EffectServer();
  readonly redis: ChaosRedis;
  readonly apis: (ServiceProcess | null)[] = [];
  readonly apiUrls: (string | null)[] = [];
  readonly workers: ServiceProcess[] = [];
  private readonly all: ServiceProcess[] = [];
  private pg!: TestPostgresDatabase;
  proxy!: PgChaosProxy;
  private cwd = makeTempDir();
  private env: Record<string, string> = {};
  adminToken = '';

  constructor(private readonly options: ChaosClusterOptions = {}) {
    this.redis = new ChaosRedis(options.persistentRedis ?? true);
    this.model = new ChaosModel(() => this.workerPids(), options.tokenDelayMs);
  }

  /** The database itself, not through the proxy (for the test's own checks). */
  get databaseUrl(): string {
    return this.pg.url;
  }

  workerPids(): number[] {
    return this.workers.filter((worker) => worker.child.exitCode === null && worker.child.signalCode === null).map((worker) => worker.child.pid!);
  }

  /** Base URLs of the API processes that are up. */
  liveApis(): string[] {
    return this.apiUrls.filter(
      (url, index): url is string => url !== null && this.apis[index]?.child.exitCode === null && this.apis[index]?.child.signalCode === null,
    );
  }

  async start(): Promise<void> {
    this.pg = await createTestPostgresDatabase();
    const target = new URL(TEST_POSTGRES_URL);
    this.proxy = new PgChaosProxy({ host: target.hostname, port: Number(target.port || 5432) });
    const proxyPort = await this.proxy.start();
    const database = new URL(this.pg.url);
    database.host = `127.0.0.1:${proxyPort}`;
    const [modelUrl] = await Promise.all([this.model.start(), this.effects.start(), this.redis.start()]);
    writeFileSync(
      path.join(this.cwd, 'config.yaml'),
      [
        'llm:',
        '  max_retries: 0',
        'agent:',
        '  default_tools: [run_command]',
        'tools:',
        '  run_command:',
        '    enabled: true',
        ...(this.options.config ?? []),
      ].join('\n'),
    );
    this.env = testEnv(path.join(this.cwd, 'data'), {
      ...GENEROUS_RATE_LIMITS,
      SERVICE_DATABASE_URL: database.toString(),
      SERVICE_REDIS_URL: this.redis.url,
      SERVICE_REDIS_PREFIX: 'chaos',
      SERVICE_LLM_PROVIDER: 'openai',
      SERVICE_LLM_BASE_URL: modelUrl,
      SERVICE_LLM_MODEL: 'fake-model',
      SERVICE_LLM_API_KEY: 'sk-chaos',
      SERVICE_EMBEDDED_WORKER: 'false',
      ...(this.options.sharedStore ? { SERVICE_SHARED_STORE_URL: this.redis.url } : {}),
      ...(this.options.metrics ? { SERVICE_METRICS_ENABLED: 'true', SERVICE_METRICS_PORT: '0', SERVICE_METRICS_TOKEN: METRICS_TOKEN } : {}),
      ...this.options.env,
    });
    await this.startApi(0); // migrates first
    const apis = Array.from({ length: (this.options.apis ?? 2) - 1 }, (_, index) => this.startApi(index + 1));
    const workers = Array.from({ length: this.options.workers ?? 2 }, () => this.startWorker());
    await Promise.all([...apis, ...workers]);
    this.adminToken = (await registerUser(`${this.apiUrls[0]}/api/v1`, 'root')).token;
  }

  /** Starts API process `index` (again) and waits until it serves. */
  async startApi(index: number, extraEnv: Record<string, string> = {}): Promise<string> {
    const child = spawnService({ ...this.env, ...extraEnv }, { cwd: this.cwd, entry: 'dist/src/main.js' });
    this.all.push(child);
    this.apis[index] = child;
    const url = await readyUrl(child);
    this.apiUrls[index] = url;
    return url;
  }

  /** Starts one more worker process and waits until it takes turns. */
  async startWorker(): Promise<ServiceProcess> {
    const child = spawnService(this.env, { cwd: this.cwd, entry: 'dist/src/worker-main.js' });
    this.all.push(child);
    this.workers.push(child);
    await child
      .waitForLog((entry) => entry.msg === 'Switchboard worker is ready', 30_000)
      .catch((error: unknown) => {
        // Killed while starting (a chaos run kills whatever holds a turn): not a failure to start.
        if (child.child.signalCode !== 'SIGKILL') throw error;
      });
    return child;
  }

  /** Where a process serves /metrics (`metrics` on). */
  async metricsUrl(service: ServiceProcess): Promise<string> {
    const line = await service.waitForLog((entry) => typeof entry.metrics_listening === 'string');
    return `http://${line.metrics_listening as string}/metrics`;
  }

  /** SIGKILL: the process vanishes mid-whatever, its sockets reset by the kernel. */
  async kill(processToKill: ServiceProcess): Promise<void> {
    if (processToKill.child.exitCode === null && processToKill.child.signalCode === null) processToKill.child.kill('SIGKILL');
    await processToKill.exited;
    const worker = this.workers.indexOf(processToKill);
    if (worker >= 0) this.workers.splice(worker, 1);
  }

  workerByPid(pid: number | null): ServiceProcess | undefined {
    return this.workers.find((worker) => worker.child.pid === pid);
  }

  async stop(): Promise<void> {
    for (const child of this.all) if (child.child.exitCode === null && child.child.signalCode === null) child.child.kill('SIGKILL');
    await Promise.all(this.all.map((child) => child.exited));
    await Promise.all([this.model.stop(), this.effects.stop(), this.redis.stop(), this.proxy?.stop()]);
    await this.pg?.drop();
  }

  /** Every process's output, for a post-mortem (CHAOS_DEBUG=<file>). */
  dumpLogs(file: string): void {
    writeFileSync(file, this.all.map((child) => `=== pid ${child.child.pid}\n${child.stdout()}\n${child.stderr()}`).join('\n'));
  }

  /** A new session of the admin's, its client connected to any live API process and added to `sessions`. */
  async openSession(sessions: ResilientSession[]): Promise<ResilientSession> {
    const created = await request(`${this.apiUrls[0]}/api/v1/sessions`, jsonBody({}, { authorization: `Bearer ${this.adminToken}` }));
    const session = new ResilientSession(created.body.data.id, this.adminToken, () => this.liveApis());
    sessions.push(session);
    await session.connect();
    return session;
  }

  /** A run's end: the clients closed, with CHAOS_DEBUG=<file> every log and every client's frames written, everything stopped. */
  async tearDown(sessions: readonly ResilientSession[]): Promise<void> {
    for (const session of sessions) session.close();
    if (process.env.CHAOS_DEBUG) {
      this.dumpLogs(process.env.CHAOS_DEBUG);
      writeFileSync(
        `${process.env.CHAOS_DEBUG}.frames.json`,
        JSON.stringify(
          sessions.map((session) => ({ id: session.sessionId, frames: session.frames })),
          null,
          1,
        ),
      );
    }
    await this.stop();
  }

  /** The request log lines of answers with this status, from every process (e.g. 500s during an outage). */
  answered(status: number): string[] {
    const marker = `"res":{"status":${status}}`;
    return this.all.flatMap((child) =>
      child
        .stdout()
        .split('\n')
        .filter((line) => line.includes(marker)),
    );
  }

  /** What every process wrote to stderr, and their error and warning log lines (for a failure's message). */
  errors(): string {
    return this.all
      .map((child) =>
        [
          child.stderr(),
          ...child
            .stdout()
            .split('\n')
            .filter((line) => /"level":"(error|fatal|warn)"/.test(line)),
        ]
          .filter(Boolean)
          .join('\n'),
      )
      .filter(Boolean)
      .join('\n---\n');
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
