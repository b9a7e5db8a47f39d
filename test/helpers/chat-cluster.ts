import { randomBytes } from 'node:crypto';
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { FakeOpenAiServer } from '../fakes/openai-server';
import { FakeSlackApi } from '../fakes/slack-api';
import { FakeTelegramApi } from '../fakes/telegram-api';
import { GENEROUS_RATE_LIMITS } from './auth-service';
import { ChatWebhooks } from './chat-webhooks';
import { testEnv } from './env';
import { jsonBody, request } from './http';
import { createTestPostgresDatabase, type TestPostgresDatabase } from './postgres';
import { readyUrl, spawnService, type ServiceProcess } from './process';
import { TEST_REDIS_URL, deleteKeys, uniquePrefix } from './redis';
import { makeTempDir } from './temp-dir';
import { registerUser } from './users';

/** Debian's libfaketime (package `faketime`; .ci/run installs it): shifts a process's wall clock. */
export const LIBFAKETIME = '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1';

const TELEGRAM_TOKEN = '424242:cluster-bot-token';
const TELEGRAM_SECRET = 'cluster-webhook-secret';

export interface ClusterOptions {
  /**
   * Wall-clock offsets (libfaketime syntax, e.g. `+5s`, `-5s`) for API process A, API process B
   * and the worker; absent: the real clock.
   */
  clocks?: { a?: string; b?: string; worker?: string };
  /** Extra config.yaml text (YAML) appended to the cluster's own. */
  config?: string;
  /** Worker processes besides the first (default none). */
  extraWorkers?: number;
}

/**
 * Scale-out with the chat channels for real: two API processes (`node dist/src/main.js`, no embedded
 * worker) and one worker process on PostgreSQL and Redis, Slack and Telegram on in both API processes
 * against fake platform servers, and an OpenAI-compatible fake model every turn calls.
 */
export interface ChatCluster {
  /** Base URLs of API processes A and B (http://127.0.0.1:<port>). */
  apis: [string, string];
  processes: ServiceProcess[];
  slack: FakeSlackApi;
  telegram: FakeTelegramApi;
  model: FakeOpenAiServer;
  adminToken: string;
  /** Delivers a Telegram update to API process `to`'s webhook. */
  telegramUpdate(to: 0 | 1, update: unknown): Promise<void>;
  /** Delivers a Slack event (signed, in an Events API envelope) to API process `to`. */
  slackEvent(to: 0 | 1, event: Record<string, unknown>): Promise<void>;
  /** An admin REST call on API process A. */
  admin(method: string, apiPath: string, body?: unknown): Promise<{ status: number; body: any }>;
  /** Starts one more worker process (after a test killed one); resolves once it is ready. */
  startWorker(): Promise<ServiceProcess>;
  stop(): Promise<void>;
}

export async function startChatCluster(options: ClusterOptions = {}): Promise<ChatCluster> {
  const skewed = Object.values(options.clocks ?? {}).some(Boolean);
  if (skewed && !existsSync(LIBFAKETIME)) throw new Error(`clock skew needs libfaketime (${LIBFAKETIME}): apt-get install faketime`);
  const pg: TestPostgresDatabase = await createTestPostgresDatabase();
  const prefix = uniquePrefix('cluster');
  const slack = new FakeSlackApi();
  const telegram = new FakeTelegramApi(TELEGRAM_TOKEN);
  const model = new FakeOpenAiServer();
  const [, , modelUrl] = await Promise.all([slack.start(), telegram.start(), model.start()]);
  const signingSecret = randomBytes(16).toString('hex');
  const cwd = makeTempDir();
  writeFileSync(
    path.join(cwd, 'config.yaml'),
    [
      'llm:',
      '  max_retries: 0',
      'agent:',
      '  default_tools: [current_time, calculator, write_file]',
      'channels:',
      '  slack:',
      '    edit_interval_ms: 200',
      '  telegram:',
      '    edit_interval_ms: 100',
      options.config ?? '',
    ].join('\n'),
  );
  const env = (clock: string | undefined, extra: Record<string, string> = {}) => ({
    ...testEnv(path.join(cwd, 'data'), {
      ...GENEROUS_RATE_LIMITS,
      SERVICE_DATABASE_URL: pg.url,
      SERVICE_REDIS_URL: TEST_REDIS_URL,
      SERVICE_REDIS_PREFIX: prefix,
      SERVICE_LLM_PROVIDER: 'openai',
      SERVICE_LLM_BASE_URL: modelUrl,
      SERVICE_LLM_MODEL: 'fake-model',
      SERVICE_LLM_API_KEY: 'sk-cluster',
      SERVICE_SLACK_BOT_TOKEN: `xoxb-${randomBytes(8).toString('hex')}`,
      SERVICE_SLACK_SIGNING_SECRET: signingSecret,
      SERVICE_SLACK_API_URL: slack.url,
      SERVICE_TELEGRAM_BOT_TOKEN: TELEGRAM_TOKEN,
      SERVICE_TELEGRAM_API_ROOT: telegram.apiRoot,
      SERVICE_TELEGRAM_WEBHOOK_SECRET: TELEGRAM_SECRET,
      ...extra,
    }),
    // Timers (the monotonic clock) stay true; only the wall clock (Date.now, timestamps) is shifted.
    ...(clock ? { LD_PRELOAD: LIBFAKETIME, FAKETIME: clock, FAKETIME_DONT_FAKE_MONOTONIC: '1', FAKETIME_NO_CACHE: '1' } : {}),
  });
  const processes: ServiceProcess[] = [];
  const spawn = (clock: string | undefined, entry: string, extra?: Record<string, string>) => {
    const child = spawnService(env(clock, extra), { cwd, entry });
    processes.push(child);
    return child;
  };
  const stop = async () => {
    for (const child of processes) if (child.child.exitCode === null) child.child.kill('SIGKILL');
    await Promise.all(processes.map((child) => child.exited));
    await Promise.all([slack.stop(), telegram.stop(), model.stop()]);
    await pg.drop();
    await deleteKeys(prefix);
  };
  try {
    const a = await readyUrl(spawn(options.clocks?.a, 'dist/src/main.js', { SERVICE_EMBEDDED_WORKER: 'false' })); // migrates first
    const worker = spawn(options.clocks?.worker, 'dist/src/worker-main.js');
    const extra = Array.from({ length: options.extraWorkers ?? 0 }, () => spawn(options.clocks?.worker, 'dist/src/worker-main.js'));
    const [b] = await Promise.all([
      readyUrl(spawn(options.clocks?.b, 'dist/src/main.js', { SERVICE_EMBEDDED_WORKER: 'false' })),
      worker.waitForLog((entry) => entry.msg === 'Switchboard worker is ready'),
      ...extra.map((child) => child.waitForLog((entry) => entry.msg === 'Switchboard worker is ready')),
    ]);
    const apis: [string, string] = [a, b];
    const adminToken = (await registerUser(`${a}/api/v1`, 'root')).token;
    const webhooks = new ChatWebhooks(signingSecret, TELEGRAM_SECRET);
    return {
      apis,
      processes,
      slack,
      telegram,
      model,
      adminToken,
      telegramUpdate: (to, update) => webhooks.telegramUpdate(apis[to], update),
      slackEvent: (to, event) => webhooks.slackEvent(apis[to], event),
      admin: (method, apiPath, body) =>
        request(
          `${a}/api/v1${apiPath}`,
          body === undefined
            ? { method, headers: { authorization: `Bearer ${adminToken}` } }
            : { ...jsonBody(body, { authorization: `Bearer ${adminToken}` }), method },
        ),
      startWorker: async () => {
        const another = spawn(options.clocks?.worker, 'dist/src/worker-main.js');
        await another.waitForLog((entry) => entry.msg === 'Switchboard worker is ready');
        return another;
      },
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
