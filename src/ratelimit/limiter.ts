import type { IncomingMessage } from 'node:http';
import type { RequestHandler, Response } from 'express';
import { API_PREFIX } from '../api/app';
import type { Endpoint } from '../api/endpoint';
import { AppError } from '../core/errors';
import { RATE_LIMIT_KEYS, type RateLimitKey } from '../core/principal';
import type { Logger } from '../logs/logger';
import { createClientIpResolver, type ClientIpResolver } from './client-ip';
import { RouteTable } from './route-table';
import { ruleFromSpec, type RateLimitRule } from '../config/rate-limit-spec';
import type { HitResult, RateLimitStore } from './store';
import { StoreFailureLog } from './store-failure-log';

export const RATE_LIMITER_DEFAULTS = {
  /** At most one "store unavailable" warning per this interval while the store keeps failing. */
  storeFailureLogIntervalMs: 60_000,
  /** Bucket template of WebSocket upgrades when the caller names none: one bucket per client. */
  upgradeRoute: 'UPGRADE *',
};

export interface RateLimiterOptions {
  /** `config.api.rate_limits`: one validated `<N>/<window>` spec per key. */
  rules: Readonly<Record<RateLimitKey, string>>;
  /** `config.api.trusted_proxy_cidrs`. */
  trustedProxyCidrs: readonly string[];
  store: RateLimitStore;
  logger: Logger;
  storeFailureLogIntervalMs?: number;
  /** Told of every refusal, with the limit that refused (the hub's metrics count them). */
  onRefusal?: (key: RateLimitKey) => void;
}

/** The outcome of one check; `result` is null when the store failed and the request passed. */
export interface RateLimitDecision {
  allowed: boolean;
  rule: RateLimitRule;
  result: HitResult | null;
}

export type UpgradeCheck = { allowed: true } | { allowed: false; retryAfterS: number };

/**
 * Moving-window rate limiting per route template and client IP (spec, Limits; decisions.md §6).
 *
 * Wiring (src/compose/http.ts): `registerEndpoint` is createApp's `before` hook, so the limiter learns each
 * declared endpoint and its `rateLimit` key; `middleware` runs once per request ahead of routing
 * and counts it in exactly one bucket; `checkUpgrade` does the same for WebSocket upgrades.
 */
export class RateLimiter {
  readonly rules: Readonly<Record<RateLimitKey, RateLimitRule>>;
  private readonly routes = new RouteTable();
  private readonly clientIp: ClientIpResolver;
  private readonly failures: StoreFailureLog;

  constructor(private readonly options: RateLimiterOptions) {
    this.rules = Object.fromEntries(RATE_LIMIT_KEYS.map((key) => [key, ruleFromSpec(options.rules[key])])) as Record<RateLimitKey, RateLimitRule>;
    this.clientIp = createClientIpResolver(options.trustedProxyCidrs);
    this.failures = new StoreFailureLog(options.logger, options.storeFailureLogIntervalMs ?? RATE_LIMITER_DEFAULTS.storeFailureLogIntervalMs);
  }

  get storeDescription(): string {
    return this.options.store.description;
  }

  /** createApp's `before` hook: records the endpoint's route and key. Adds no per-endpoint middleware. */
  readonly registerEndpoint = (endpoint: Endpoint): RequestHandler[] => {
    this.routes.add(endpoint.method, API_PREFIX, endpoint.path, endpoint.rateLimit ?? 'default');
    return [];
  };

  /** A raw route (a channel's webhook receiver, mounted before the API): every request under `prefix` counts under `key`. */
  registerPrefix(prefix: string, key: RateLimitKey): void {
    this.routes.addPrefix(prefix, key);
  }

  /** App-level middleware: counts the request in its route's bucket; 429 when the window is full. */
  readonly middleware: RequestHandler = async (req, res, next) => {
    const route = this.routes.match(req.method, req.path);
    const decision = await this.check(req, route.key, route.template);
    if (decision.result) setRateLimitHeaders(res, decision.result);
    if (!decision.allowed) throw tooManyRequests(decision.result!);
    next();
  };

  /**
   * For WebSocket upgrades (under the `default` limit): call from the server's `upgrade` handler
   * before accepting; on a refusal answer with `writeUpgradeRefusal`.
   *
   * @example
   * server.on('upgrade', async (req, socket, head) => {
   *   const verdict = await limiter.checkUpgrade(req);
   *   if (!verdict.allowed) return writeUpgradeRefusal(socket, verdict.retryAfterS);
   *   wss.handleUpgrade(req, socket, head, (ws) => wss.emit('connection', ws, req));
   * });
   */
  async checkUpgrade(req: IncomingMessage, route: string = RATE_LIMITER_DEFAULTS.upgradeRoute): Promise<UpgradeCheck> {
    const decision = await this.check(req, 'default', route);
    return decision.allowed ? { allowed: true } : { allowed: false, retryAfterS: retryAfterSeconds(decision.result!) };
  }

  /** Counts one request of this client in `template`'s bucket under the `key` limit. Never throws. */
  async check(req: IncomingMessage, key: RateLimitKey, template: string): Promise<RateLimitDecision> {
    const rule = this.rules[key];
    const bucket = `${key}:${template}:${this.clientIp(req)}`;
    try {
      const result = await this.options.store.hit(bucket, rule.limit, rule.windowMs);
      this.failures.success();
      if (!result.allowed) this.options.onRefusal?.(key);
      return { allowed: result.allowed, rule, result };
    } catch (error) {
      this.failures.failure(error);
      return { allowed: true, rule, result: null };
    }
  }

  /**
   * One hit in a bucket of the caller's own, on the same store (a webhook's limit over all its
   * senders: src/triggers). Throws when the store fails; the caller decides whether to pass.
   */
  hit(bucket: string, limit: number, windowMs: number): Promise<HitResult> {
    return this.options.store.hit(bucket, limit, windowMs);
  }

  /** Store connection problems are reported through the same once-per-interval warning. */
  reportStoreError(error: unknown): void {
    this.failures.failure(error);
  }

  close(): Promise<void> {
    return this.options.store.close();
  }
}

/** Whole seconds until one more request is possible; at least 1 on a refusal. */
export function retryAfterSeconds(result: HitResult): number {
  return Math.max(1, Math.ceil(result.nextFreeMs / 1000));
}

function setRateLimitHeaders(res: Response, result: HitResult): void {
  res.setHeader('RateLimit-Limit', String(result.limit));
  res.setHeader('RateLimit-Remaining', String(result.remaining));
  res.setHeader('RateLimit-Reset', String(Math.ceil(result.nextFreeMs / 1000)));
}

function tooManyRequests(result: HitResult): AppError {
  const retryAfter = retryAfterSeconds(result);
  return new AppError('RATE_LIMIT_EXCEEDED', `Too many requests; try again in ${retryAfter} s.`, {
    headers: { 'Retry-After': String(retryAfter) },
    details: { retry_after_s: retryAfter },
  });
}
