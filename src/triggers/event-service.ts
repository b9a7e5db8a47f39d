import { createHash } from 'node:crypto';
import { AppError } from '../core/errors';
import type { WorkflowRow } from '../db/models';
import type { Logger } from '../logs/logger';
import { ruleFromSpec } from '../config/rate-limit-spec';
import { NO_EVENTS, type ScheduleSpec, type WebhookSpec, type WorkflowEvents } from '../workflows/events-schema';
import type { EventIntake } from './event-intake';
import { verifyRequest } from './verify';

/** Named limits of the hook endpoint. */
export const HOOK_DEFAULTS = {
  /** The largest body a hook takes (and keeps): 1 MiB. */
  maxBodyBytes: 1_048_576,
} as const;

export interface EventServiceOptions {
  workflowByName(name: string): Promise<WorkflowRow | null>;
  intake: EventIntake;
  /** Environment variables: a hook's secret is read by the name its `secret_env` gives, never stored. */
  secrets: Readonly<Record<string, string | undefined>>;
  /** `hooks.allow_unsigned`, `hooks.rate_limit`. */
  allowUnsigned: boolean;
  rateLimit: string;
  /** The rate limiter's store (memory, or Redis shared by every API process). */
  limits: HitCounter;
  logger: Logger;
  /** Counts each hook request by outcome (metrics; optional). */
  observe?(workflow: string, hook: string, outcome: string): void;
}

/** A moving-window counter (the rate limiter's store: memory, or Redis shared by every API process). */
export interface HitCounter {
  hit(bucket: string, limit: number, windowMs: number): Promise<{ allowed: boolean; nextFreeMs: number }>;
}

/** What the hook endpoint answers: 202 for a new delivery, 200 for a redelivery of a stored one. */
export interface HookAnswer {
  status: 200 | 202;
  deliveryId: string;
}

/** A webhook or schedule declared in a workflow, with the workflow's events read once. */
export function eventsOf(workflow: WorkflowRow): WorkflowEvents {
  return (workflow.events as WorkflowEvents | null) ?? NO_EVENTS;
}

/**
 * Webhooks in (issue 29): finds the hook, counts it against its own limit, verifies it, stores it
 * once per delivery id and starts its turn. 401 on a bad or missing signature, a stale timestamp or
 * a delivery id seen before with another body (a replay), with no turn; a redelivery (the same id
 * and body) is answered 200 with the stored delivery and runs no second turn.
 */
export class EventService {
  constructor(private readonly options: EventServiceOptions) {}

  async receive(workflowName: string, hookName: string, headers: Record<string, string | string[] | undefined>, body: Buffer): Promise<HookAnswer> {
    const { workflow, hook } = await this.find(workflowName, hookName);
    await this.limit(workflow.name, hook);
    const answer = await this.take(workflow, hook, headers, body).catch((error: unknown) => {
      this.options.observe?.(workflow.name, hook.name, error instanceof AppError ? error.code.toLowerCase() : 'error');
      throw error;
    });
    this.options.observe?.(workflow.name, hook.name, answer.status === 202 ? 'accepted' : 'redelivery');
    return answer;
  }

  private async take(workflow: WorkflowRow, hook: WebhookSpec, headers: Record<string, string | string[] | undefined>, body: Buffer): Promise<HookAnswer> {
    if (hook.verify === 'none' && !this.options.allowUnsigned)
      throw new AppError('UNAUTHORIZED', 'This hook is unsigned (verify: none) and hooks.allow_unsigned is off.');
    const secret = hook.secret_env ? (this.options.secrets[hook.secret_env] ?? null) : null;
    const verdict = await verifyRequest(hook.verify, secret, headers, body);
    if (!verdict.ok) {
      this.options.logger.warn({ workflow: workflow.name, hook: hook.name, reason: verdict.reason }, 'events: a hook request was refused');
      throw new AppError('UNAUTHORIZED', `The request is not verified: ${verdict.reason}.`);
    }
    const text = body.toString('utf8');
    let payload: unknown;
    try {
      payload = text.trim() === '' ? {} : JSON.parse(text);
    } catch {
      payload = { text }; // a plain-text body is offered to the templates as `payload.text`
    }
    const bodyHash = createHash('sha256').update(body).digest('hex');
    const stored = await this.options.intake.store({
      workflow: workflow.name,
      source: 'webhook',
      name: hook.name,
      externalId: verdict.deliveryId ?? `sha256:${bodyHash}:${Date.now()}`,
      bodyHash,
      payload: text,
      deliver: hook.deliver,
      message: hook.message,
      thread: hook.thread,
      scope: { payload, headers: plainHeaders(headers), hook: { name: hook.name, workflow: workflow.name } },
      defaultThread: verdict.deliveryId ?? bodyHash.slice(0, 16),
    });
    if (!stored.created) {
      if (stored.row.body_hash !== bodyHash) throw new AppError('UNAUTHORIZED', 'The request is not verified: its delivery id was used before (a replay).');
      return { status: 200, deliveryId: stored.row.id };
    }
    await this.options.intake.start(stored.row, stored.text);
    return { status: 202, deliveryId: stored.row.id };
  }

  private async find(workflowName: string, hookName: string): Promise<{ workflow: WorkflowRow; hook: WebhookSpec }> {
    const workflow = await this.options.workflowByName(workflowName);
    const hook = workflow ? eventsOf(workflow).webhooks.find((candidate) => candidate.name === hookName) : undefined;
    if (!workflow || !hook) throw new AppError('NOT_FOUND', `No webhook "${hookName}" in a workflow "${workflowName}".`);
    return { workflow, hook };
  }

  /** The hook's own moving window, all senders together (not the per-address default limit). */
  private async limit(workflow: string, hook: WebhookSpec): Promise<void> {
    const rule = ruleFromSpec(hook.rate_limit ?? this.options.rateLimit);
    let result;
    try {
      result = await this.options.limits.hit(`hooks:${workflow}:${hook.name}`, rule.limit, rule.windowMs);
    } catch (error) {
      this.options.logger.warn({ err: error }, 'events: the rate-limit store failed; the hook request passes');
      return;
    }
    if (result.allowed) return;
    this.options.observe?.(workflow, hook.name, 'rate_limited');
    const retryAfter = Math.max(1, Math.ceil(result.nextFreeMs / 1000));
    throw new AppError('RATE_LIMIT_EXCEEDED', `Too many requests to this hook; try again in ${retryAfter} s.`, {
      headers: { 'Retry-After': String(retryAfter) },
      details: { retry_after_s: retryAfter },
    });
  }
}

/** A schedule of a workflow, found by names (the run/pause routes). */
export function findSchedule(workflow: WorkflowRow | null, name: string): ScheduleSpec {
  const schedule = workflow ? eventsOf(workflow).schedules.find((candidate) => candidate.name === name) : undefined;
  if (!workflow || !schedule) throw new AppError('NOT_FOUND', `No schedule "${name}" in a workflow "${workflow?.name ?? '?'}".`);
  return schedule;
}

/** Header values as the templates see them: strings, secrets left out. */
function plainHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const hidden = new Set(['authorization', 'x-hub-signature-256', 'x-hub-signature', 'webhook-signature', 'cookie']);
  return Object.fromEntries(
    Object.entries(headers)
      .filter(([name, value]) => value !== undefined && !hidden.has(name))
      .map(([name, value]) => [name, Array.isArray(value) ? value.join(', ') : value!]),
  );
}
