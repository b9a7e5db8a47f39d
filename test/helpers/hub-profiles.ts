import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { FakeSlackApi } from '../fakes/slack-api';
import { FakeTelegramApi } from '../fakes/telegram-api';
import { GENEROUS_RATE_LIMITS } from './auth-service';
import { ChatWebhooks } from './chat-webhooks';
import { testEnv } from './env';
import { createTestPostgresDatabase, type TestPostgresDatabase } from './postgres';
import { readyUrl, spawnService, type ServiceProcess } from './process';
import { TEST_REDIS_URL, deleteKeys, uniquePrefix } from './redis';
import { makeTempDir } from './temp-dir';

/**
 * The two ways the hub runs, for suites that run the same protocol cases on both (test/protocol):
 *
 * - `embedded`: what `npm start` runs — one process (`node dist/src/main.js`), SQLite, the
 *   in-process queue and event log, its embedded worker.
 * - `scaled`: what production runs — two API processes without workers and one worker process
 *   (`dist/src/worker-main.js`) on PostgreSQL (a throw-away database) and Redis (a key prefix of its
 *   own). REST goes to API process A, sockets to API process B, so every turn crosses processes.
 *
 * Both have Slack (Events API) and Telegram (webhook) on against fake platform servers, and the
 * built-in offline model (deterministic; it calls the built-in tools when asked plainly), so no
 * fake has to live in the hub's process. `SWITCHBOARD_TEST_PROFILES=embedded` (or `scaled`) runs
 * one profile only, while working on it; `npm test` runs both.
 */
export type ProfileName = 'embedded' | 'scaled';

export const PROFILES: readonly ProfileName[] = ['embedded', 'scaled'];

/** The profiles this run covers (SWITCHBOARD_TEST_PROFILES, comma-separated; default both). */
export function testProfiles(): ProfileName[] {
  const wanted = (process.env.SWITCHBOARD_TEST_PROFILES ?? '')
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean);
  const unknown = wanted.filter((name) => !(PROFILES as readonly string[]).includes(name));
  if (unknown.length > 0) throw new Error(`SWITCHBOARD_TEST_PROFILES: unknown profile ${unknown.join(', ')} (known: ${PROFILES.join(', ')})`);
  return wanted.length > 0 ? (wanted as ProfileName[]) : [...PROFILES];
}

/** How long a profile's hub may take to start on a loaded 2-core machine (its `beforeAll`). */
export const PROFILE_START_TIMEOUT_MS = 120_000;
/** How long one of its processes may take to say it is ready (a third of the whole: up to three start one after another). */
const PROCESS_READY_TIMEOUT_MS = PROFILE_START_TIMEOUT_MS / 3;

const TELEGRAM_TOKEN = '515151:profile-bot-token';

export interface ProfileOptions {
  /** Extra config.yaml lines, appended to the profile's own. */
  config?: string[];
  /** Extra environment for every hub process. */
  env?: Record<string, string>;
}

export interface ProfileHub {
  profile: ProfileName;
  /** REST: http://127.0.0.1:<port>/api/v1 of API process A (embedded: the one process). */
  api: string;
  /** Sockets: ws://127.0.0.1:<port>/ws/v1 of API process B (embedded: the one process). */
  ws: string;
  /** Base URLs (http://127.0.0.1:<port>) of the API processes: [A, B] scaled, [the one] embedded. */
  apis: string[];
  processes: ServiceProcess[];
  slack: FakeSlackApi;
  telegram: FakeTelegramApi;
  webhooks: ChatWebhooks;
  /** Where platform webhooks are delivered: API process B when scaled (A serves REST). */
  webhookBase: string;
  stop(): Promise<void>;
}

/** Starts a hub in `profile`; everything it started is stopped again if it fails to come up. */
export async function startProfileHub(profile: ProfileName, options: ProfileOptions = {}): Promise<ProfileHub> {
  const slack = new FakeSlackApi();
  const telegram = new FakeTelegramApi(TELEGRAM_TOKEN);
  await Promise.all([slack.start(), telegram.start()]);
  const signingSecret = randomBytes(16).toString('hex');
  const telegramSecret = randomBytes(12).toString('hex');
  const pg: TestPostgresDatabase | null = profile === 'scaled' ? await createTestPostgresDatabase() : null;
  const prefix = uniquePrefix('profile');
  const cwd = makeTempDir();
  writeFileSync(
    path.join(cwd, 'config.yaml'),
    ['channels:', '  slack:', '    edit_interval_ms: 200', '  telegram:', '    edit_interval_ms: 100', ...(options.config ?? [])].join('\n'),
  );
  const env = (extra: Record<string, string> = {}) =>
    testEnv(path.join(cwd, 'data'), {
      ...GENEROUS_RATE_LIMITS,
      SERVICE_SLACK_BOT_TOKEN: `xoxb-${randomBytes(8).toString('hex')}`,
      SERVICE_SLACK_SIGNING_SECRET: signingSecret,
      SERVICE_SLACK_API_URL: slack.url,
      SERVICE_TELEGRAM_BOT_TOKEN: TELEGRAM_TOKEN,
      SERVICE_TELEGRAM_API_ROOT: telegram.apiRoot,
      SERVICE_TELEGRAM_WEBHOOK_SECRET: telegramSecret,
      ...(pg ? { SERVICE_DATABASE_URL: pg.url, SERVICE_REDIS_URL: TEST_REDIS_URL, SERVICE_REDIS_PREFIX: prefix } : {}),
      ...options.env,
      ...extra,
    });
  const processes: ServiceProcess[] = [];
  const spawn = (entry: string, extra?: Record<string, string>) => {
    const child = spawnService(env(extra), { cwd, entry });
    processes.push(child);
    return child;
  };
  const stop = async () => {
    for (const child of processes) if (child.child.exitCode === null && child.child.signalCode === null) child.child.kill('SIGKILL');
    await Promise.all(processes.map((child) => child.exited));
    await Promise.all([slack.stop(), telegram.stop()]);
    if (pg) {
      await pg.drop();
      await deleteKeys(prefix);
    }
  };
  try {
    let apis: string[];
    if (profile === 'embedded') {
      apis = [await readyUrl(spawn('dist/src/main.js'), PROCESS_READY_TIMEOUT_MS)];
    } else {
      const a = await readyUrl(spawn('dist/src/main.js', { SERVICE_EMBEDDED_WORKER: 'false' }), PROCESS_READY_TIMEOUT_MS); // migrates first
      const worker = spawn('dist/src/worker-main.js');
      const [b] = await Promise.all([
        readyUrl(spawn('dist/src/main.js', { SERVICE_EMBEDDED_WORKER: 'false' }), PROCESS_READY_TIMEOUT_MS),
        worker.waitForLog((entry) => entry.msg === 'Switchboard worker is ready', PROCESS_READY_TIMEOUT_MS),
      ]);
      apis = [a, b];
    }
    const rest = apis[0]!;
    const sockets = apis.at(-1)!;
    return {
      profile,
      api: `${rest}/api/v1`,
      ws: `${sockets.replace('http', 'ws')}/ws/v1`,
      apis,
      processes,
      slack,
      telegram,
      webhooks: new ChatWebhooks(signingSecret, telegramSecret),
      webhookBase: sockets,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
