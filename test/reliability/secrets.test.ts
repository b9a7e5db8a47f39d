import { randomBytes } from 'node:crypto';
import { io } from 'socket.io-client';
import { verifyPassword } from '../../src/auth/passwords';
import { sha256 } from '../../src/auth/secrets';
import { openAiChunk, openAiTextReply } from '../fakes/openai-server';
import { OtlpReceiver } from '../fakes/otlp-receiver';
import { MESSAGE_METHODS } from '../fakes/slack-api';
import { jsonBody, request, type JsonResponse } from '../helpers/http';
import { TEST_REDIS_URL, uniquePrefix } from '../helpers/redis';
import { createTestIdp, type TestIdp } from '../helpers/saml-idp';
import { removeTempDirs } from '../helpers/temp-dir';
import { openSocket, type TestSocket } from '../helpers/ws-client';
import { scaled } from './scale';
import { randomHubSecrets, startAuthHub, telegramTextUpdate, type AuthHub } from './support/auth-hub';
import { SamlResponses } from './support/auth-saml';
import {
  createPasswordDatabase,
  dumpDatabase,
  dumpRedis,
  findCanaries,
  RedisTap,
  type Canary,
  type DatabaseDump,
  type PasswordDatabase,
  type RedisDump,
} from './support/secrets-scan';

/**
 * Issue 19, "Secrets": an API process and a worker process on PostgreSQL (a role whose password is
 * a canary) and Redis, logging at `trace`, every secret a unique random canary. Real traffic goes
 * through every path — registration, logins good and bad, refresh, API keys good and bad, turns
 * with a tool call and with a provider error, Slack and Telegram webhooks signed and forged,
 * webchat, SAML, metrics, the log stream, password change — and then every output is searched for
 * every canary (whole, and any 12 characters of it): each log line of both processes, the admin log
 * stream, every Redis key and value under the hub's prefix and what it published, every row of
 * every table, every response body and socket frame, the OpenAPI document, what the hub sent to
 * the model, Slack, Telegram and the widget, and its trace spans. Where a secret must be kept (a
 * password, an API key, a refresh token) the hash of the canary is checked to be what is stored.
 */

let database: PasswordDatabase;
let hub: AuthHub;
let tap: RedisTap;
let traces: OtlpReceiver;
const spKey: TestIdp = createTestIdp('switchboard'); // the hub's own SAML signing key
const canaries: Canary[] = [];
/** Every response body received, with the canaries it is the job of that response to hand out. */
const responses: { what: string; body: string; carries: string[] }[] = [];
/** Frames of the session socket and lines of the admin log stream. */
const frames: string[] = [];
const logStream: string[] = [];
const widgetMessages: string[] = [];
let redisDump: RedisDump;
let databaseDump: DatabaseDump;
let openApi: string;

const user = { username: 'casey', email: 'casey@example.com' };
const password = `pw-${randomBytes(12).toString('base64url')}`;
const newPassword = `pw-${randomBytes(12).toString('base64url')}`;
const wrongPassword = `pw-${randomBytes(12).toString('base64url')}`;
const tooShort = randomBytes(5).toString('base64url').slice(0, 7);
const userMarker = `user-marker-${randomBytes(6).toString('hex')}`;
const replyMarker = `reply-marker-${randomBytes(6).toString('hex')}`;
const refreshTokens: string[] = [];
let apiKey: string;
/** Rounds of failed logins and near-miss API keys. */
const rounds = scaled(3, 40);

function canary(name: string, value: string): string {
  canaries.push({ name, value });
  return value;
}

/** A JWT's secret part is its signature (header and claims are readable by anyone who holds it). */
function addToken(name: string, token: string): void {
  canary(name, token.split('.')[2]!);
}

async function call(what: string, url: string, init: RequestInit = {}, carries: string[] = []): Promise<JsonResponse> {
  const response = await request(url, init);
  responses.push({ what: `${what} (${response.status})`, body: typeof response.body === 'string' ? response.body : JSON.stringify(response.body), carries });
  return response;
}

const bearer = (token: string, init: RequestInit = {}): RequestInit => ({
  ...init,
  headers: { ...(init.headers as Record<string, string>), authorization: `Bearer ${token}` },
});

beforeAll(async () => {
  const secrets = randomHubSecrets();
  for (const [name, value] of Object.entries(secrets)) canary(name, value);
  canary('Telegram bot token, secret part', secrets.telegramBotToken.split(':')[1]!);
  spKey.keyPem
    .split('\n')
    .filter((line) => line.length === 64)
    .forEach((line, index) => canary(`SAML private key, line ${index + 1}`, line));
  [database, traces] = await Promise.all([
    createPasswordDatabase(),
    (async () => {
      const receiver = new OtlpReceiver();
      await receiver.start();
      return receiver;
    })(),
  ]);
  canary('database password', database.password);
  canary('password', password);
  canary('new password', newPassword);
  canary('wrong password', wrongPassword);
  canary('too-short password', tooShort);
  canary('password as Basic credentials', Buffer.from(`${user.username}:${password}`).toString('base64'));
  const redisPrefix = uniquePrefix('secrets');
  tap = new RedisTap(TEST_REDIS_URL);
  await tap.listen(redisPrefix);
  hub = await startAuthHub({
    databaseUrl: database.url,
    secrets,
    logLevel: 'trace',
    separateWorker: true,
    samlSigningKey: spKey,
    redisPrefix,
    env: { SERVICE_TRACES_OTLP_URL: traces.url },
  });
  await driveTraffic();
  // Everything the run wrote is in place before it is read: audit rows are written in batches.
  await new Promise((resolve) => setTimeout(resolve, 500));
  openApi = JSON.stringify((await request(`${hub.api}/openapi.json`)).body);
  [redisDump, databaseDump] = await Promise.all([dumpRedis(TEST_REDIS_URL, redisPrefix), dumpDatabase(database.url)]);
  tap.stop();
  // Stopped before the logs are read, so shutdown lines are searched too.
  await hub.stop();
}, 60_000);

afterAll(async () => {
  tap?.stop();
  await hub?.stop();
  await traces?.stop();
  await database?.drop();
  removeTempDirs();
});

async function driveTraffic(): Promise<void> {
  const api = hub.api;
  // Registration (the first user: admin), then the admin log stream for the whole run.
  const registered = await call('register', `${api}/auth/register`, jsonBody({ ...user, password }));
  expect(registered.status).toBe(201);
  let access = registered.body.data.access_token as string;
  addToken('access token (registration)', access);
  refreshTokens.push(canary('refresh token (registration)', registered.body.data.refresh_token));
  responses.at(-1)!.carries.push('access token (registration)', 'refresh token (registration)');
  const stream = await openSocket(`${hub.ws}/ws/v1/logs?level=DEBUG&token=${encodeURIComponent(access)}`);
  stream.ws.on('message', (data) => logStream.push(data.toString()));

  // Logins: good (by email), wrong password, unknown user, a too-short password at registration, Basic auth.
  await call('login, wrong password', `${api}/auth/login`, jsonBody({ username: user.username, password: wrongPassword }));
  await call('login, unknown user', `${api}/auth/login`, jsonBody({ username: 'nobody_here', password }));
  await call('register, password too short', `${api}/auth/register`, jsonBody({ username: 'shorty', email: 'shorty@example.com', password: tooShort }));
  await call('Basic auth', `${api}/auth/me`, { headers: { authorization: `Basic ${Buffer.from(`${user.username}:${password}`).toString('base64')}` } });
  const login = await call('login', `${api}/auth/login`, jsonBody({ username: user.email, password }), ['access token (login)', 'refresh token (login)']);
  expect(login.status).toBe(200);
  addToken('access token (login)', login.body.data.access_token);
  refreshTokens.push(canary('refresh token (login)', login.body.data.refresh_token));

  // Refresh, and the spent token presented again (refused).
  const refreshed = await call('refresh', `${api}/auth/refresh`, jsonBody({ refresh_token: login.body.data.refresh_token }), [
    'access token (refresh)',
    'refresh token (refresh)',
  ]);
  addToken('access token (refresh)', refreshed.body.data.access_token);
  refreshTokens.push(canary('refresh token (refresh)', refreshed.body.data.refresh_token));
  await call('refresh, spent token', `${api}/auth/refresh`, jsonBody({ refresh_token: login.body.data.refresh_token }));
  access = refreshed.body.data.access_token;

  // API keys: created (shown once), used both ways, then bad ones.
  const created = await call('create API key', `${api}/auth/api-keys`, bearer(access, jsonBody({ label: 'canary key' })), ['API key']);
  apiKey = created.body.data.key;
  canary('API key', apiKey.slice(12)); // the first 12 characters are its listed prefix, shown on purpose
  await call('API key as bearer', `${api}/auth/me`, bearer(apiKey));
  await call('API key in X-API-Key', `${api}/sessions`, { headers: { 'x-api-key': apiKey } });
  // Failed logins and near-miss keys, `rounds` times: each wrong password a canary of its own, each
  // bad key the real one with one character changed (any 12 characters of it in an output are a leak).
  for (let round = 0; round < rounds; round += 1) {
    const guess = canary(`wrong password ${round + 1}`, `pw-${randomBytes(12).toString('base64url')}`);
    await call('login, wrong password', `${api}/auth/login`, jsonBody({ username: round % 2 === 0 ? user.username : user.email, password: guess }));
    const at = 12 + ((round * 7) % (apiKey.length - 12));
    const nearMiss = apiKey.slice(0, at) + (apiKey[at] === 'A' ? 'B' : 'A') + apiKey.slice(at + 1);
    await call('API key, one character changed', `${api}/auth/me`, round % 2 === 0 ? { headers: { 'x-api-key': nearMiss } } : bearer(nearMiss));
  }
  await call('API key, cut short', `${api}/auth/me`, bearer(apiKey.slice(0, -2)));
  await call('access token in the query string', `${api}/auth/me?token=${access}&api_key=${apiKey}`);
  await call('tampered access token', `${api}/auth/me`, bearer(`${access.slice(0, -3)}xyz`));

  // Turns over REST: one with a tool call, one whose provider refuses the key and echoes it.
  const session = (await call('create session', `${api}/sessions`, bearer(access, jsonBody({})))).body.data.id as string;
  const socket: TestSocket = await openSocket(`${hub.ws}/ws/v1/sessions/${session}`, { protocols: ['bearer', access] });
  hub.model.enqueue(
    {
      kind: 'stream',
      events: [
        openAiChunk.toolCall({
          index: 0,
          id: 'call_calc',
          type: 'function',
          function: { name: 'calculator', arguments: JSON.stringify({ expression: '6 * 7' }) },
        }),
        openAiChunk.finish('tool_calls'),
        openAiChunk.usage(20, 5),
        openAiChunk.done(),
      ],
    },
    openAiTextReply(['The answer is 42. ', replyMarker]),
  );
  const toolTurn = await call(
    'turn with a tool call',
    `${api}/sessions/${session}/messages?sync=true`,
    bearer(access, jsonBody({ text: `What is 6 * 7? ${userMarker}` })),
  );
  expect(toolTurn.status).toBe(200);
  hub.model.enqueue({
    kind: 'error',
    status: 401,
    body: { error: { message: `Incorrect API key provided: ${hub.secrets.llmApiKey}.`, type: 'invalid_request_error', code: 'invalid_api_key' } },
  });
  const failedTurn = await call(
    'turn, provider refuses the key',
    `${api}/sessions/${session}/messages?sync=true`,
    bearer(apiKey, jsonBody({ text: 'and now?' })),
  );
  expect(failedTurn.status).toBe(502);
  await socket.nextOfType('error');
  frames.push(...socket.frames.map((frame) => JSON.stringify(frame)));
  socket.close();

  // Slack: a signed event (a turn, answered through the Web API with the bot token), a forged one.
  hub.model.enqueue(openAiTextReply([`slack ${replyMarker}`]));
  const slackBody = hub.slackEventBody({
    type: 'message',
    channel: 'D0SECRETS',
    channel_type: 'im',
    user: 'U0CASEY',
    text: 'hello from Slack',
    ts: `${Math.floor(Date.now() / 1000)}.000200`,
  });
  await call('Slack event', `${api}/channels/slack/events`, { method: 'POST', headers: hub.slackHeaders(slackBody), body: slackBody });
  await call('Slack event, forged', `${api}/channels/slack/events`, {
    method: 'POST',
    headers: hub.slackHeaders(slackBody, { secret: 'forged' }),
    body: slackBody,
  });
  await hub.slack.waitForReply('D0SECRETS', `slack ${replyMarker}`);

  // Telegram: an update with the secret (a turn, answered with the bot token in the URL), one without.
  hub.model.enqueue(openAiTextReply([`telegram ${replyMarker}`]));
  await call(
    'Telegram update',
    `${api}/channels/telegram/webhook`,
    jsonBody(telegramTextUpdate('hello from Telegram'), { 'x-telegram-bot-api-secret-token': hub.secrets.telegramWebhookSecret }),
  );
  await call(
    'Telegram update, wrong secret',
    `${api}/channels/telegram/webhook`,
    jsonBody(telegramTextUpdate('forged'), { 'x-telegram-bot-api-secret-token': `${hub.secrets.telegramWebhookSecret}x` }),
  );
  await hub.telegram.waitFor((entry) => String(entry.params.text ?? '').includes(`telegram ${replyMarker}`), 10_000);

  // Webchat: a visitor's session and message (its signed session id is the visitor's credential).
  hub.model.enqueue(openAiTextReply([`webchat ${replyMarker}`]));
  await webchatTurn();

  // SAML: the signed login redirect, a genuine response, a refused one, the metadata.
  const saml = new SamlResponses(api, hub.idp);
  const redirect = await fetch(`${api}/auth/saml/login`, { redirect: 'manual' });
  expect(new URL(redirect.headers.get('location')!).searchParams.get('Signature')).toBeTruthy(); // the key is in use
  const accepted = await saml.post(await saml.genuine('sso.casey@corp.example.test'));
  expect(accepted.status).toBe(200);
  responses.push({ what: 'SAML ACS (200)', body: JSON.stringify(accepted.body), carries: ['access token (SAML)', 'refresh token (SAML)'] });
  addToken('access token (SAML)', accepted.body.data.access_token);
  refreshTokens.push(canary('refresh token (SAML)', accepted.body.data.refresh_token));
  const refusedSaml = await saml.post(await saml.genuine('sso.other@corp.example.test', { audience: 'another-sp' }));
  responses.push({ what: `SAML ACS, wrong audience (${refusedSaml.status})`, body: JSON.stringify(refusedSaml.body), carries: [] });
  await call('SAML metadata', `${api}/auth/saml/metadata`);

  // Metrics of both processes, with and without the token.
  await call('metrics', `${hub.base}/metrics`, bearer(hub.secrets.metricsToken));
  await call('metrics, wrong token', `${hub.base}/metrics`, bearer(`${hub.secrets.metricsToken}x`));
  const workerMetrics = (await hub.processes[1]!.waitForLog((entry) => typeof entry.metrics_listening === 'string')).metrics_listening as string;
  await call('worker metrics', `http://127.0.0.1:${workerMetrics.split(':').pop()}/metrics`, bearer(hub.secrets.metricsToken));

  // Admin reads, errors of every kind, and the password change.
  for (const path of ['/config', '/config/models', '/admin/channels', '/health/ready', '/audit', '/usage', '/users', '/auth/api-keys', '/tools'])
    await call(`GET ${path}`, `${api}${path}`, bearer(access));
  await call('unknown path', `${api}/no/such/path`, bearer(access));
  await call('unknown session', `${api}/sessions/00000000-0000-4000-8000-000000000000`, bearer(access));
  await call(
    'malformed JSON',
    `${api}/sessions`,
    bearer(access, { method: 'POST', headers: { 'content-type': 'application/json' }, body: `{"password": "${password}"` }),
  );
  await call(
    'change password, wrong current',
    `${api}/auth/change-password`,
    bearer(access, jsonBody({ current_password: wrongPassword, new_password: newPassword })),
  );
  const changed = await call(
    'change password',
    `${api}/auth/change-password`,
    bearer(access, jsonBody({ current_password: password, new_password: newPassword })),
    ['access token (password change)', 'refresh token (password change)'],
  );
  expect(changed.status).toBe(200);
  addToken('access token (password change)', changed.body.data.access_token);
  refreshTokens.push(canary('refresh token (password change)', changed.body.data.refresh_token));
  await call('old access token after the change', `${api}/auth/me`, bearer(access));
  await call('logout', `${api}/auth/logout`, jsonBody({ refresh_token: changed.body.data.refresh_token }));
  await call('logout everywhere', `${api}/auth/logout-all`, bearer(changed.body.data.access_token, { method: 'POST' }));
  stream.close();
}

/** One visitor: connects like rasa-webchat, sends a message, waits for the answer. */
async function webchatTurn(): Promise<void> {
  const socket = io(hub.base, { path: '/socket.io/', forceNew: true, reconnection: false, transports: ['websocket'] });
  try {
    const sessionId = await new Promise<string>((resolve, reject) => {
      socket.once('connect_error', reject);
      socket.once('session_confirm', (id: unknown) =>
        resolve(typeof id === 'object' && id !== null ? (id as { session_id: string }).session_id : (id as string)),
      );
      socket.on('connect', () => socket.emit('session_request', { session_id: null }));
    });
    canary('webchat session id, signature half', sessionId.slice(32));
    const answered = new Promise<void>((resolve) =>
      socket.on('bot_uttered', (message: { text: string }) => {
        widgetMessages.push(JSON.stringify(message));
        if (message.text.includes(replyMarker)) resolve();
      }),
    );
    socket.emit('user_uttered', { message: 'hello from the widget', customData: {}, session_id: sessionId });
    await answered;
  } finally {
    socket.close();
  }
}

function processOutput(index: number): string {
  const service = hub.processes[index]!;
  return `${service.stdout()}\n${service.stderr()}`;
}

describe('no canary in any output', () => {
  it('control: every canary was in use during the run', () => {
    expect(hub.model.requests.every((entry) => entry.headers.authorization === `Bearer ${hub.secrets.llmApiKey}`)).toBe(true);
    expect(hub.model.requests.length).toBeGreaterThanOrEqual(5);
    expect(hub.slack.calls.some((entry) => entry.token === hub.secrets.slackBotToken && MESSAGE_METHODS.has(entry.method))).toBe(true);
    expect(hub.telegram.calls.some((entry) => entry.method === 'sendMessage')).toBe(true); // its URL carries the token
    expect(responses.filter((entry) => entry.what.startsWith('metrics (200)') || entry.what.startsWith('worker metrics (200)'))).toHaveLength(2);
    expect(canaries.length).toBeGreaterThan(35);
  });

  it('in the log lines of both processes, at every level (trace and up)', () => {
    const lines = [0, 1].flatMap((index) => processOutput(index).split('\n')).filter((line) => line.trim() !== '');
    const levels = new Set(
      lines.map((line) => {
        try {
          return JSON.parse(line).level as string;
        } catch {
          return 'not JSON';
        }
      }),
    );
    expect([...levels].sort()).toEqual(expect.arrayContaining(['debug', 'info', 'trace', 'warn']));
    expect(lines.length).toBeGreaterThan(200);
    expect(findCanaries(processOutput(0), canaries)).toEqual([]);
    expect(findCanaries(processOutput(1), canaries)).toEqual([]);
  });

  it('in the admin log stream', () => {
    expect(logStream.length).toBeGreaterThan(20);
    expect(findCanaries(logStream.join('\n'), canaries)).toEqual([]);
  });

  it('in any Redis key or value under the hub’s prefix, or any message it published', () => {
    expect(redisDump.keys).toBeGreaterThan(5);
    expect(Object.keys(redisDump.types)).toEqual(expect.arrayContaining(['hash', 'stream']));
    expect(redisDump.text).toContain(replyMarker); // control: the values were read (a turn's events)
    expect(tap.messages.length).toBeGreaterThan(0);
    expect(findCanaries(redisDump.text, canaries)).toEqual([]);
    expect(findCanaries(tap.messages.join('\n'), canaries)).toEqual([]);
  });

  it('in any row of any table', () => {
    expect(Object.keys(databaseDump.tables)).toEqual(expect.arrayContaining(['users', 'api_keys', 'refresh_tokens', 'messages', 'sessions']));
    expect(databaseDump.text).toContain(userMarker); // control: the rows were read
    expect(findCanaries(databaseDump.text, canaries)).toEqual([]);
  });

  it('in any response body (errors above all), beyond the secrets a response exists to hand out', () => {
    expect(responses.filter((entry) => /\((4|5)\d\d\)$/.test(entry.what)).length).toBeGreaterThan(15);
    const leaks = responses.flatMap((entry) => {
      // Two logins in one second get the same access token (same claims): compare by value.
      const carried = new Set(canaries.filter((item) => entry.carries.includes(item.name)).map((item) => item.value));
      return findCanaries(
        entry.body,
        canaries.filter((item) => !carried.has(item.value)),
      ).map((finding) => ({ response: entry.what, ...finding }));
    });
    expect(leaks).toEqual([]);
  });

  it('in socket frames, or what the hub sent to the model, Slack, Telegram and the widget', () => {
    expect(frames.some((frame) => frame.includes('PROVIDER_ERROR'))).toBe(true);
    expect(findCanaries(frames.join('\n'), canaries)).toEqual([]);
    expect(findCanaries(hub.model.requests.map((entry) => JSON.stringify(entry.body)).join('\n'), canaries)).toEqual([]);
    // The bot token is the Web API's own credential (sent as `token` by some calls): everything else is content.
    expect(findCanaries(JSON.stringify(hub.slack.calls.map(({ args: { token: _credential, ...args } }) => args)), canaries)).toEqual([]);
    // The webhook secret is setWebhook's own parameter (Telegram sends it back on each delivery): everything else is content.
    const telegramContent = hub.telegram.calls.map(({ method, params: { secret_token: secret, ...params } }) =>
      method === 'setWebhook' ? params : { ...params, secret },
    );
    expect(findCanaries(JSON.stringify(telegramContent), canaries)).toEqual([]);
    expect(findCanaries(widgetMessages.join('\n'), canaries)).toEqual([]);
  });

  it('in trace spans', () => {
    expect(traces.spans.length).toBeGreaterThan(0);
    expect(findCanaries(JSON.stringify(traces.spans), canaries)).toEqual([]);
  });

  it('in the OpenAPI document', () => {
    expect(openApi).toContain('/auth/api-keys');
    expect(findCanaries(openApi, canaries)).toEqual([]);
  });
});

describe('stored only as hashes, where they are stored', () => {
  it('the password as an argon2id hash of the new password (not of the old one)', async () => {
    const [row] = databaseDump.tables.users!.filter((entry) => entry.username === user.username);
    expect(String(row!.password_hash)).toMatch(/^\$argon2id\$/);
    expect(await verifyPassword(String(row!.password_hash), newPassword)).toBe(true);
    expect(await verifyPassword(String(row!.password_hash), password)).toBe(false);
  });

  it('the API key as its sha256, beside the 12-character prefix it is listed by', () => {
    const keys = databaseDump.tables.api_keys!;
    expect(keys.map((entry) => [entry.key_hash, entry.key_prefix])).toEqual([[sha256(apiKey), apiKey.slice(0, 12)]]);
  });

  it('each refresh token as its sha256', () => {
    const stored = new Set(databaseDump.tables.refresh_tokens!.map((entry) => entry.token_hash));
    expect(refreshTokens.length).toBeGreaterThanOrEqual(5);
    expect(refreshTokens.filter((token) => !stored.has(sha256(token)))).toEqual([]);
  });
});
