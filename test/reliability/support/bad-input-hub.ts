import { spawn, type ChildProcess } from 'node:child_process';
import { SEED } from './bad-input-values';
import { scaled } from '../scale';
import { createHmac, randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { ERROR_STATUS } from '../../../src/core/errors';
import { FAKE_SLACK, FakeSlackApi } from '../../fakes/slack-api';
import { FakeTelegramApi } from '../../fakes/telegram-api';
import { GENEROUS_RATE_LIMITS } from '../../helpers/auth-service';
import { testEnv } from '../../helpers/env';
import { readyUrl, spawnService, type ServiceProcess } from '../../helpers/process';
import { makeTempDir } from '../../helpers/temp-dir';
import { registerUser, type TestUser } from '../../helpers/users';

/**
 * The bad-input suite's target: the built hub as a real process (`node dist/src/main.js`, SQLite, the
 * built-in offline model), with Slack (Events API) and Telegram (webhook) configured against the fake
 * platform servers so their webhook endpoints exist. A second process probes `GET /health` every
 * 200 ms (its own event loop, so the test's load does not colour the figures), and the hub's RSS is
 * read from /proc. Every answer goes through `check`, which counts cases per class and keeps what
 * broke the pass criteria: a crash, a 5xx, a hang, a refusal outside the documented envelope.
 */

export const TELEGRAM_TOKEN = '777000:bad-input-bot-token';
/** Longest a single request may take before it counts as a hang. */
const REQUEST_TIMEOUT_MS = 15_000;

export interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  /** The parsed body, or undefined when it is not JSON. */
  json: any;
}

export interface RawRequest {
  method: string;
  /** Path and query, sent as is (no normalisation). */
  target: string;
  /** A header given as an array is sent once per value (duplicate headers). */
  headers?: Record<string, string | string[]>;
  body?: string | Buffer;
}

export interface Violation {
  kind: 'server-error' | 'envelope' | 'hang' | 'not-stored' | 'unexpected';
  label: string;
  detail: string;
}

export interface HealthFigures {
  probes: number;
  maxWaitMs: number;
  /** Probes not answered 200, plus probes that went out and were not answered within the grace. */
  failed: number;
  /** Probes not answered 200. */
  notOk: number;
}

export class BadInputHub {
  readonly counts: Record<string, number> = {};
  readonly violations: Violation[] = [];
  readonly agent = new http.Agent({ keepAlive: true, maxSockets: 16 });
  private prober: ChildProcess | null = null;
  private probeResults: { ms: number; status: number }[] = [];
  /** Beats the prober sent out (it numbers them). */
  private probesStarted = 0;

  constructor(
    readonly process: ServiceProcess,
    readonly origin: string,
    readonly admin: TestUser,
    readonly slack: FakeSlackApi,
    readonly telegram: FakeTelegramApi,
    readonly slackSecret: string,
    readonly telegramSecret: string,
    /** The hub's working directory; its data (SQLite, workspace) is under `data/`. */
    readonly cwd: string,
  ) {}

  get api(): string {
    return `${this.origin}/api/v1`;
  }

  get port(): number {
    return Number(new URL(this.origin).port);
  }

  get pid(): number {
    return this.process.child.pid!;
  }

  get workspaceDir(): string {
    return path.join(this.cwd, 'data', 'workspace');
  }

  auth(token = this.admin.token): Record<string, string> {
    return { authorization: `Bearer ${token}` };
  }

  /** The hub's resident set size in KiB (VmRSS), or NaN once it has exited. */
  rssKiB(): number {
    try {
      const status = readFileSync(`/proc/${this.pid}/status`, 'utf8');
      return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN);
    } catch {
      return Number.NaN;
    }
  }

  alive(): boolean {
    return this.process.child.exitCode === null && this.process.child.signalCode === null;
  }

  /** Sends exactly these bytes (duplicate headers, odd encodings); a hang becomes a violation, never a stuck test. */
  send(request: RawRequest, label = `${request.method} ${request.target}`): Promise<Answer | null> {
    if (process.env.BAD_INPUT_TRACE) process.stderr.write(`${label.slice(0, 160)}\n`);
    return new Promise((resolve) => {
      const headers: http.OutgoingHttpHeaders = { ...(request.headers ?? {}) };
      if (request.body !== undefined && headers['content-length'] === undefined) headers['content-length'] = Buffer.byteLength(request.body);
      const req = http.request({ host: '127.0.0.1', port: this.port, method: request.method, path: request.target, headers, agent: this.agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          clearTimeout(timer);
          const text = Buffer.concat(chunks).toString('utf8');
          let json: any;
          try {
            json = text === '' ? undefined : JSON.parse(text);
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
        });
        res.on('error', () => resolve(null));
      });
      const timer = setTimeout(() => {
        this.violate('hang', label, `no answer in ${REQUEST_TIMEOUT_MS} ms`);
        req.destroy();
      }, REQUEST_TIMEOUT_MS);
      req.on('error', (error) => {
        clearTimeout(timer);
        // The server may close on an oversized body before reading it all (EPIPE / reset): no answer to check.
        if (!this.alive()) this.violate('server-error', label, `the hub exited: ${error.message}`);
        resolve(null);
      });
      if (request.body !== undefined) req.write(request.body);
      req.end();
    });
  }

  /** JSON request to `/api/v1<route>` as the admin (or with the given headers). */
  json(method: string, route: string, body?: unknown, headers: Record<string, string> = this.auth()): Promise<Answer | null> {
    return this.send({
      method,
      target: `/api/v1${route}`,
      headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
  }

  count(kind: string, cases = 1): void {
    this.counts[kind] = (this.counts[kind] ?? 0) + cases;
  }

  violate(kind: Violation['kind'], label: string, detail: string): void {
    this.violations.push({ kind, label: label.slice(0, 200), detail: detail.slice(0, 400) });
  }

  /**
   * Counts one case of `kind` and checks its answer: no 5xx; a refusal is exactly the documented
   * envelope (`{data: null, error: {code, message, details}, meta: {request_id, timestamp}}`), its
   * code one of the closed set with the HTTP status the set gives it, `request_id` equal to the
   * `X-Request-ID` header; a success is the envelope with `error: null` (except a platform webhook's
   * acknowledgement, whose shape the platform sets: Slack's `{challenge}`, an empty 200). Returns the
   * answer when it passed, else null.
   */
  check(kind: string, label: string, answer: Answer | null, options: { platformAck?: boolean } = {}): Answer | null {
    this.count(kind);
    if (answer === null) return null; // a hang or a reset is recorded where it happened
    if (answer.status >= 500) {
      this.violate('server-error', `${kind}: ${label}`, `${answer.status} ${answer.text.slice(0, 300)}`);
      return null;
    }
    const problem = answer.status >= 400 ? refusalProblem(answer) : options.platformAck ? null : successProblem(answer);
    if (problem) {
      this.violate('envelope', `${kind}: ${label}`, `${answer.status}: ${problem}; body ${answer.text.slice(0, 300)}`);
      return null;
    }
    return answer;
  }

  /** Starts the 200 ms health probe in its own process. */
  startProbe(): void {
    this.probeResults = [];
    this.probesStarted = 0;
    const script = `
      const http = require('node:http');
      const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
      // Beats on a fixed grid from the start: a late timer (this process starved of CPU on a busy
      // machine) is caught up, not carried into every later beat. Each beat says it went out; a
      // line on stdin stops the beats (the ones out are still answered).
      const origin = Date.now();
      let beat = 0;
      let next = null;
      const probe = () => {
        const started = Date.now();
        beat += 1;
        process.stdout.write('{"beat":' + beat + '}\\n');
        let done = false;
        const finish = (status) => { if (done) return; done = true; process.stdout.write(JSON.stringify({ ms: Date.now() - started, status }) + '\\n'); };
        const req = http.get({ host: '127.0.0.1', port: ${this.port}, path: '/api/v1/health', agent }, (res) => { res.resume(); res.on('end', () => finish(res.statusCode)); });
        req.on('error', () => finish(0));
        req.setTimeout(30000, () => { finish(-1); req.destroy(); });
        next = setTimeout(probe, Math.max(0, origin + beat * 200 - Date.now()));
      };
      process.stdin.once('data', () => clearTimeout(next));
      probe();`;
    this.prober = spawn(process.execPath, ['-e', script], { stdio: ['pipe', 'pipe', 'ignore'] });
    let partial = '';
    this.prober.stdout!.on('data', (chunk: Buffer) => {
      const lines = (partial + chunk.toString('utf8')).split('\n');
      partial = lines.pop()!;
      for (const line of lines) {
        if (!line) continue;
        const parsed = JSON.parse(line) as { beat: number } | { ms: number; status: number };
        if ('beat' in parsed) this.probesStarted = parsed.beat;
        else this.probeResults.push(parsed);
      }
    });
  }

  /**
   * Stops the probe's beats, gives the probes that went out up to `graceMs` to be answered, then ends
   * it; its figures (the longest wait, probes not answered 200, probes that went out and were never
   * answered).
   */
  async stopProbe(graceMs = PASS_BOUNDS.healthWaitMs): Promise<HealthFigures> {
    const prober = this.prober;
    this.prober = null;
    if (prober && prober.exitCode === null) {
      prober.stdin!.write('stop\n');
      const deadline = Date.now() + graceMs;
      while (this.probeResults.length < this.probesStarted && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      prober.kill('SIGTERM');
      await new Promise((resolve) => prober.once('exit', resolve));
    }
    const results = this.probeResults;
    const notOk = results.filter((result) => result.status !== 200).length;
    return {
      probes: results.length,
      maxWaitMs: results.reduce((max, result) => Math.max(max, result.ms), 0),
      failed: notOk + Math.max(0, this.probesStarted - results.length),
      notOk,
    };
  }

  /** Waits (up to `timeoutMs`: past the event log's 60 s replay retention) for the RSS to come back within `ratio` of `baselineKiB`; the last reading. */
  async settledRss(baselineKiB: number, ratio = PASS_BOUNDS.rssRatio, timeoutMs = PASS_BOUNDS.settleMs): Promise<number> {
    const deadline = Date.now() + timeoutMs;
    let rss = this.rssKiB();
    while (rss > baselineKiB * ratio && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      rss = this.rssKiB();
    }
    return rss;
  }

  /** A Slack Events API request signed with the hub's signing secret (or the given one). */
  slackRequest(body: string, options: { secret?: string; timestamp?: number; signature?: string; contentType?: string } = {}): RawRequest {
    const timestamp = options.timestamp ?? Math.floor(Date.now() / 1000);
    const signature =
      options.signature ??
      `v0=${createHmac('sha256', options.secret ?? this.slackSecret)
        .update(`v0:${timestamp}:${body}`)
        .digest('hex')}`;
    return {
      method: 'POST',
      target: '/api/v1/channels/slack/events',
      headers: { 'content-type': options.contentType ?? 'application/json', 'x-slack-request-timestamp': String(timestamp), 'x-slack-signature': signature },
      body,
    };
  }

  /** A Telegram webhook delivery with the right secret (or the given one). */
  telegramRequest(body: string | Buffer, secret: string | null = this.telegramSecret, contentType = 'application/json'): RawRequest {
    return {
      method: 'POST',
      target: '/api/v1/channels/telegram/webhook',
      headers: { 'content-type': contentType, ...(secret === null ? {} : { 'x-telegram-bot-api-secret-token': secret }) },
      body,
    };
  }

  /** One line per class and the figures, for the test output and the guide. */
  summary(figures: Record<string, unknown>): string {
    const total = Object.values(this.counts).reduce((sum, count) => sum + count, 0);
    const rows = Object.entries(this.counts).map(([kind, count]) => `  ${kind.padEnd(28)} ${String(count).padStart(6)}`);
    return [`bad input: ${total} cases`, ...rows, ...Object.entries(figures).map(([name, value]) => `  ${name}: ${JSON.stringify(value)}`)].join('\n');
  }

  async stop(): Promise<void> {
    await this.stopProbe();
    this.agent.destroy();
    if (this.alive()) {
      this.process.child.kill('SIGTERM');
      await this.process.exited;
    }
    await Promise.all([this.slack.stop(), this.telegram.stop()]);
  }
}

const ISO_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

function keysAre(value: unknown, keys: string[]): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && Object.keys(value).sort().join(',') === [...keys].sort().join(',');
}

function metaProblem(answer: Answer): string | null {
  const meta = answer.json.meta;
  if (!keysAre(meta, ['request_id', 'timestamp'])) return 'meta is not {request_id, timestamp}';
  if (meta.request_id !== answer.headers['x-request-id']) return 'meta.request_id is not the X-Request-ID header';
  if (typeof meta.timestamp !== 'string' || !ISO_TIMESTAMP.test(meta.timestamp)) return 'meta.timestamp is not ISO 8601 UTC';
  return null;
}

/** Why a 4xx answer is not the documented error envelope, or null when it is. */
export function refusalProblem(answer: Answer): string | null {
  if (!String(answer.headers['content-type'] ?? '').startsWith('application/json')) return `content-type ${answer.headers['content-type']}`;
  if (!keysAre(answer.json, ['data', 'error', 'meta'])) return 'not {data, error, meta}';
  if (answer.json.data !== null) return 'data is not null';
  const error = answer.json.error;
  if (!keysAre(error, ['code', 'message', 'details'])) return 'error is not {code, message, details}';
  const status = (ERROR_STATUS as Record<string, number>)[error.code];
  if (status === undefined) return `code ${error.code} is not in the closed set`;
  if (status !== answer.status) return `code ${error.code} belongs to HTTP ${status}`;
  if (typeof error.message !== 'string' || error.message === '' || /\n\s+at /.test(error.message)) return 'message is empty or holds a stack';
  if (typeof error.details !== 'object' || error.details === null || Array.isArray(error.details)) return 'details is not an object';
  return metaProblem(answer);
}

function successProblem(answer: Answer): string | null {
  const type = String(answer.headers['content-type'] ?? '');
  if (answer.status === 204 || !type.startsWith('application/json')) return null; // no body, or not an API answer (HTML, redirects)
  if (!keysAre(answer.json, ['data', 'error', 'meta'])) return 'not {data, error, meta}';
  if (answer.json.error !== null) return 'error is not null';
  return metaProblem(answer);
}

export interface StartOptions {
  /** Extra environment for the hub. */
  env?: Record<string, string>;
  /** config.yaml for the hub (its working directory's), when the defaults are not enough. */
  config?: string;
}

/** Starts the fakes and the hub process, registers the admin. */
export async function startBadInputHub(options: StartOptions = {}): Promise<BadInputHub> {
  const slack = new FakeSlackApi();
  const telegram = new FakeTelegramApi(TELEGRAM_TOKEN);
  await Promise.all([slack.start(), telegram.start()]);
  const slackSecret = randomBytes(16).toString('hex');
  const telegramSecret = randomBytes(16).toString('hex');
  const cwd = makeTempDir();
  if (options.config !== undefined) writeFileSync(path.join(cwd, 'config.yaml'), options.config);
  const service = spawnService(
    testEnv(path.join(cwd, 'data'), {
      ...GENEROUS_RATE_LIMITS,
      SERVICE_RATE_LIMIT_CHANNEL_WEBHOOKS: '100000/minute',
      SERVICE_LOG_LEVEL: 'info', // the ready line names the port
      SERVICE_SLACK_BOT_TOKEN: `xoxb-${randomBytes(8).toString('hex')}`,
      SERVICE_SLACK_SIGNING_SECRET: slackSecret,
      SERVICE_SLACK_API_URL: slack.url,
      SERVICE_TELEGRAM_BOT_TOKEN: TELEGRAM_TOKEN,
      SERVICE_TELEGRAM_API_ROOT: telegram.apiRoot,
      SERVICE_TELEGRAM_WEBHOOK_SECRET: telegramSecret,
      ...options.env,
    }),
    { cwd },
  );
  let origin: string;
  try {
    origin = await readyUrl(service);
  } catch (error) {
    service.child.kill('SIGKILL');
    await Promise.all([slack.stop(), telegram.stop()]);
    throw error;
  }
  // Both chat channels running (auth.test and getMe answered): their webhooks take deliveries.
  for (let attempt = 0; attempt < 100; attempt += 1) {
    const ready = (await (await fetch(`${origin}/api/v1/health/ready`)).json()) as { data: { channels: Record<string, { status: string }> } };
    if (ready.data.channels.slack?.status === 'running' && ready.data.channels.telegram?.status === 'running') break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const admin = await registerUser(`${origin}/api/v1`, 'root');
  return new BadInputHub(service, origin, admin, slack, telegram, slackSecret, telegramSecret, cwd);
}

export { FAKE_SLACK };

/**
 * The bounds. The full run (in band, alone on the machine) holds the issue's: a probe never waits
 * over 1 s, RSS back within 20 %. The short run shares 2 cores with the rest of `npm test` (another
 * jest worker starting hub processes) and lasts seconds, so its probe waits and the allocator's
 * slowness to hand pages back measure the machine more than the hub: it still fails a hang or a
 * hub that keeps what it was sent (a 1 MiB body held per case), at looser bounds.
 */
export const PASS_BOUNDS = scaled({ healthWaitMs: 5_000, rssRatio: 1.6, settleMs: 15_000 }, { healthWaitMs: 1_000, rssRatio: 1.2, settleMs: 75_000 });

/** Each file's last step: the probe stopped, RSS given time to settle, the figures printed, the pass criteria asserted. */
export interface RunBounds {
  healthWaitMs?: number;
  rssRatio?: number;
  /**
   * Count probes that went out and were never answered as failed; the cost file, which keeps worker
   * threads busy on both cores, judges by the longest wait and by answers that were not 200 instead.
   */
  missedProbesFail?: boolean;
}

export async function expectRunPassed(hub: BadInputHub, rssBaselineKiB: number, bounds: RunBounds = {}): Promise<void> {
  const health = await hub.stopProbe();
  const rssAfterKiB = await hub.settledRss(rssBaselineKiB, bounds.rssRatio ?? PASS_BOUNDS.rssRatio);
  console.log(
    hub.summary({
      seed: SEED,
      health,
      rssBaselineKiB,
      rssAfterKiB,
      rssRatio: Number((rssAfterKiB / rssBaselineKiB).toFixed(2)),
      violations: hub.violations.length,
    }),
  );
  expectPassed(
    hub,
    { health, rssBaselineKiB, rssAfterKiB },
    { healthWaitMs: PASS_BOUNDS.healthWaitMs, rssRatio: PASS_BOUNDS.rssRatio, missedProbesFail: true, ...bounds },
  );
}

/** The pass criteria. */
function expectPassed(hub: BadInputHub, figures: { health: HealthFigures; rssBaselineKiB: number; rssAfterKiB: number }, bounds: Required<RunBounds>): void {
  expect(hub.alive()).toBe(true);
  expect(hub.violations.slice(0, 25)).toEqual([]);
  expect(bounds.missedProbesFail ? figures.health.failed : figures.health.notOk).toBe(0);
  expect(figures.health.maxWaitMs).toBeLessThanOrEqual(bounds.healthWaitMs);
  expect(figures.rssAfterKiB).toBeLessThanOrEqual(figures.rssBaselineKiB * bounds.rssRatio);
}
