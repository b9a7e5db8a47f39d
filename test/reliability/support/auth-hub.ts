import { createHmac, randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { FakeOpenAiServer, openAiTextReply } from '../../fakes/openai-server';
import { FAKE_SLACK, FakeSlackApi } from '../../fakes/slack-api';
import { FakeTelegramApi } from '../../fakes/telegram-api';
import { GENEROUS_RATE_LIMITS } from '../../helpers/auth-service';
import { testEnv } from '../../helpers/env';
import { jsonBody, request, type JsonResponse } from '../../helpers/http';
import { readyUrl, spawnService, type ServiceProcess } from '../../helpers/process';
import { TEST_REDIS_URL, deleteKeys, uniquePrefix } from '../../helpers/redis';
import { createTestIdp, type TestIdp } from '../../helpers/saml-idp';
import { makeTempDir } from '../../helpers/temp-dir';

/**
 * Every credential and platform secret a hub holds, each a fresh random value per run (so a test
 * can look for it anywhere: the secrets suite uses them as canaries).
 */
export interface HubSecrets {
  jwtSecret: string;
  slackSigningSecret: string;
  slackBotToken: string;
  telegramBotToken: string;
  telegramWebhookSecret: string;
  llmApiKey: string;
  webchatSessionSecret: string;
  metricsToken: string;
}

export function randomHubSecrets(): HubSecrets {
  const hex = (bytes: number) => randomBytes(bytes).toString('hex');
  return {
    jwtSecret: hex(32),
    slackSigningSecret: hex(16),
    slackBotToken: `xoxb-${hex(12)}`,
    telegramBotToken: `${1_000_000 + randomBytes(3).readUIntBE(0, 3)}:${randomBytes(24).toString('base64url')}`,
    telegramWebhookSecret: `tg_${hex(16)}`,
    llmApiKey: `sk-${hex(20)}`,
    webchatSessionSecret: `wc_${hex(16)}`,
    metricsToken: `mt_${hex(16)}`,
  };
}

/** Where the hub says its assertion consumer is (`SERVICE_PUBLIC_URL` + the ACS path); never dialled. */
export const PUBLIC_URL = 'https://hub.example.test';
export const ACS_URL = `${PUBLIC_URL}/api/v1/auth/saml/acs`;
export const SAML_ENTRY_POINT = 'https://idp.example.test/sso';
/** The hub's SAML entity ID (the default `auth.saml.issuer`): the audience assertions must name. */
export const SP_ENTITY_ID = 'switchboard';

export interface AuthHubOptions {
  /** PostgreSQL database URL the hub runs on (the caller creates and drops it). */
  databaseUrl: string;
  secrets?: HubSecrets;
  logLevel?: 'trace' | 'debug' | 'info';
  /** Turns run in a worker process of their own; otherwise in the API process (embedded worker). */
  separateWorker?: boolean;
  /** The SP's own key pair: AuthnRequests are signed with it (`SERVICE_SAML_PRIVATE_KEY`). */
  samlSigningKey?: TestIdp;
  /** Extra environment for every process. */
  env?: Record<string, string>;
  /** The Redis key prefix (default: a fresh one); its keys are deleted at `stop()`. */
  redisPrefix?: string;
}

/**
 * A real hub as operators run it: `node dist/src/main.js` on PostgreSQL and Redis (a key prefix of
 * its own), with every way in switched on — REST, the session and log-stream WebSockets, SAML,
 * Slack (events mode), Telegram (webhook mode), webchat, metrics on the API port — against fake
 * Slack, Telegram and OpenAI-compatible servers, and an IdP of its own.
 */
export interface AuthHub {
  /** http://127.0.0.1:<port> */
  base: string;
  /** `${base}/api/v1` */
  api: string;
  /** ws://127.0.0.1:<port> */
  ws: string;
  secrets: HubSecrets;
  redisPrefix: string;
  idp: TestIdp;
  model: FakeOpenAiServer;
  slack: FakeSlackApi;
  telegram: FakeTelegramApi;
  /** The API process first, then the worker process (when separate). */
  processes: ServiceProcess[];
  /** A Slack Events API request body (an `event_callback` envelope around `event`). */
  slackEventBody(event: Record<string, unknown>): string;
  /** The `X-Slack-*` headers Slack would send for `body` (signed with `secret`, default the hub's). */
  slackHeaders(body: string, options?: { secret?: string; timestamp?: number }): Record<string, string>;
  /** Posts to the Telegram webhook with the given secret header (null: none). */
  telegramUpdate(update: unknown, secret: string | null): Promise<JsonResponse>;
  stop(): Promise<void>;
}

let updateCounter = 0;
/** A Telegram text update from a private chat. */
export function telegramTextUpdate(text: string): Record<string, unknown> {
  updateCounter += 1;
  const id = 500_000 + updateCounter;
  const user = { id: 77, is_bot: false, first_name: 'Tess' };
  return {
    update_id: id,
    message: { message_id: id, date: Math.floor(Date.now() / 1000), chat: { id: 77, type: 'private', first_name: 'Tess' }, from: user, text },
  };
}

export async function startAuthHub(options: AuthHubOptions): Promise<AuthHub> {
  const secrets = options.secrets ?? randomHubSecrets();
  const redisPrefix = options.redisPrefix ?? uniquePrefix('reliability');
  const idp = createTestIdp();
  const slack = new FakeSlackApi();
  const telegram = new FakeTelegramApi(secrets.telegramBotToken);
  const model = new FakeOpenAiServer();
  const [, , modelUrl] = await Promise.all([slack.start(), telegram.start(), model.start()]);
  const cwd = makeTempDir();
  writeFileSync(
    path.join(cwd, 'config.yaml'),
    [
      'llm:',
      '  max_retries: 0',
      'agent:',
      '  default_tools: [current_time, calculator]',
      'auth:',
      '  saml:',
      `    idp_issuer: ${idp.entityId}`,
      '    role_attribute: role',
      'channels:',
      '  slack:',
      '    edit_interval_ms: 200',
      '  telegram:',
      '    edit_interval_ms: 100',
    ].join('\n'),
  );
  const env = (extra: Record<string, string> = {}) =>
    testEnv(path.join(cwd, 'data'), {
      ...GENEROUS_RATE_LIMITS,
      SERVICE_LOG_LEVEL: options.logLevel ?? 'info',
      SERVICE_JWT_SECRET: secrets.jwtSecret,
      SERVICE_DATABASE_URL: options.databaseUrl,
      SERVICE_REDIS_URL: TEST_REDIS_URL,
      SERVICE_REDIS_PREFIX: redisPrefix,
      SERVICE_PUBLIC_URL: PUBLIC_URL,
      SERVICE_LLM_PROVIDER: 'openai',
      SERVICE_LLM_BASE_URL: modelUrl,
      SERVICE_LLM_MODEL: 'fake-model',
      SERVICE_LLM_API_KEY: secrets.llmApiKey,
      SERVICE_SLACK_BOT_TOKEN: secrets.slackBotToken,
      SERVICE_SLACK_SIGNING_SECRET: secrets.slackSigningSecret,
      SERVICE_SLACK_API_URL: slack.url,
      SERVICE_TELEGRAM_BOT_TOKEN: secrets.telegramBotToken,
      SERVICE_TELEGRAM_API_ROOT: telegram.apiRoot,
      SERVICE_TELEGRAM_WEBHOOK_SECRET: secrets.telegramWebhookSecret,
      SERVICE_WEBCHAT_ENABLED: 'true',
      SERVICE_WEBCHAT_SESSION_SECRET: secrets.webchatSessionSecret,
      SERVICE_METRICS_ENABLED: 'true',
      SERVICE_METRICS_TOKEN: secrets.metricsToken,
      SERVICE_SAML_ENABLED: 'true',
      SERVICE_SAML_ENTRY_POINT: SAML_ENTRY_POINT,
      SERVICE_SAML_IDP_CERT_FILE: idp.certFile,
      ...(options.samlSigningKey
        ? { SERVICE_SAML_PRIVATE_KEY: options.samlSigningKey.keyPem, SERVICE_SAML_SP_CERT_FILE: options.samlSigningKey.certFile }
        : {}),
      ...options.env,
      ...extra,
    });
  const processes: ServiceProcess[] = [];
  const stop = async () => {
    for (const service of processes) if (service.child.exitCode === null && service.child.signalCode === null) service.child.kill('SIGTERM');
    const exits = Promise.all(processes.map((service) => service.exited));
    const timer = setTimeout(() => processes.forEach((service) => service.child.kill('SIGKILL')), 5_000);
    await exits;
    clearTimeout(timer);
    await Promise.all([slack.stop(), telegram.stop(), model.stop()]);
    await deleteKeys(redisPrefix);
  };
  try {
    const api = spawnService(env(options.separateWorker ? { SERVICE_EMBEDDED_WORKER: 'false' } : {}), { cwd });
    processes.push(api);
    const base = await readyUrl(api);
    if (options.separateWorker) {
      // A worker serves its metrics on a port of its own (any free one here).
      const worker = spawnService(env({ SERVICE_METRICS_PORT: '0' }), { cwd, entry: 'dist/src/worker-main.js' });
      processes.push(worker);
      await worker.waitForLog((entry) => entry.msg === 'Switchboard worker is ready');
    }
    let events = 0;
    return {
      base,
      api: `${base}/api/v1`,
      ws: base.replace(/^http/, 'ws'),
      secrets,
      redisPrefix,
      idp,
      model,
      slack,
      telegram,
      processes,
      slackEventBody: (event) => {
        events += 1;
        return JSON.stringify({
          token: 'legacy',
          team_id: FAKE_SLACK.teamId,
          api_app_id: 'A1',
          type: 'event_callback',
          event_id: `EvRel${events}_${randomBytes(3).toString('hex')}`,
          event_time: Math.floor(Date.now() / 1000),
          event,
        });
      },
      slackHeaders: (body, { secret = secrets.slackSigningSecret, timestamp = Math.floor(Date.now() / 1000) } = {}) => ({
        'content-type': 'application/json',
        'x-slack-request-timestamp': String(timestamp),
        'x-slack-signature': `v0=${createHmac('sha256', secret).update(`v0:${timestamp}:${body}`).digest('hex')}`,
      }),
      telegramUpdate: (update, secret) =>
        request(`${base}/api/v1/channels/telegram/webhook`, jsonBody(update, secret === null ? {} : { 'x-telegram-bot-api-secret-token': secret })),
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** Replies the fake model gives to any turn a test causes without caring about its answer. */
export function enqueuePlainReplies(model: FakeOpenAiServer, count: number): void {
  for (let index = 0; index < count; index += 1) model.enqueue(openAiTextReply(['ok']));
}
