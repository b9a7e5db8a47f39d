import { Cron } from 'croner';
import { z } from 'zod';
import type { ChannelScope } from '../core/channel';
import { parseDeliverTarget } from '../core/delivery';
import { ruleFromSpec } from '../config/rate-limit-spec';
import { TEMPLATE_DEFAULTS, templateProblem } from './event-templates';

/** How a webhook's requests are verified (issue 29). */
export const VERIFY_METHODS = ['github', 'standard', 'token', 'none'] as const;
export type VerifyMethod = (typeof VERIFY_METHODS)[number];

const EVENT_NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/;
const ENV_NAME = /^[A-Z_][A-Z0-9_]{0,127}$/;

const template = z
  .string()
  .min(1)
  .max(TEMPLATE_DEFAULTS.maxTemplateChars)
  .superRefine((text, context) => {
    const problem = templateProblem(text);
    if (problem) context.addIssue({ code: 'custom', message: `The template does not parse: ${problem}`, params: { code: 'bad_template' } });
  });

const deliver = z.string().refine((value) => parseDeliverTarget(value) !== null, {
  message: 'Expected `<channel>:<conversation id>`, e.g. `slack:C0123456789` or `telegram:-100123`.',
});

/** A 5-field cron, or 6 with seconds first; checked by croner (the scheduler that runs it). */
export function cronProblem(pattern: string, timezone: string | undefined): string | null {
  const fields = pattern.trim().split(/\s+/).length;
  if (fields !== 5 && fields !== 6) return `expected 5 fields (or 6 with seconds first), got ${fields}`;
  try {
    new Cron(pattern, { paused: true, ...(timezone ? { timezone } : {}) }).nextRun();
    return null;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

const rateLimit = z
  .string()
  .refine(
    (value) => {
      try {
        ruleFromSpec(value);
        return true;
      } catch {
        return false;
      }
    },
    { message: 'Expected "<N>/<second|minute|hour|day>", e.g. "60/minute".' },
  )
  .optional();

export const webhookSchema = z.strictObject({
  name: z.string().regex(EVENT_NAME, 'a slug: lowercase letters, digits, "_" or "-"'),
  verify: z.enum(VERIFY_METHODS),
  /** The secret's environment variable (never the secret): required unless `verify: none`. */
  secret_env: z.string().regex(ENV_NAME, 'an environment variable name, e.g. DEPLOY_HOOK_SECRET').optional(),
  message: template,
  deliver,
  thread: template.optional(),
  /** Requests per window to this hook (all senders together); default `hooks.rate_limit`. */
  rate_limit: rateLimit,
});

export const scheduleSchema = z.strictObject({
  name: z.string().regex(EVENT_NAME, 'a slug: lowercase letters, digits, "_" or "-"'),
  cron: z.string().min(1).max(200),
  timezone: z.string().min(1).max(64).optional(),
  message: template,
  deliver,
  thread: template.optional(),
});

export const eventsSchema = z
  .strictObject({
    webhooks: z.array(webhookSchema).max(50).default([]),
    schedules: z.array(scheduleSchema).max(50).default([]),
  })
  .superRefine((events, context) => {
    events.schedules.forEach((schedule, index) => {
      const problem = cronProblem(schedule.cron, schedule.timezone);
      if (problem)
        context.addIssue({ code: 'custom', path: ['schedules', index, 'cron'], message: `Not a valid cron: ${problem}`, params: { code: 'bad_cron' } });
    });
    events.webhooks.forEach((hook, index) => {
      if (hook.verify !== 'none' && !hook.secret_env)
        context.addIssue({
          code: 'custom',
          path: ['webhooks', index, 'secret_env'],
          message: `verify: ${hook.verify} needs secret_env (the secret's variable name).`,
        });
    });
    for (const [kind, list] of [
      ['webhooks', events.webhooks],
      ['schedules', events.schedules],
    ] as const) {
      const seen = new Set<string>();
      list.forEach((item, index) => {
        if (seen.has(item.name)) context.addIssue({ code: 'custom', path: [kind, index, 'name'], message: `"${item.name}" is named twice.` });
        seen.add(item.name);
      });
    }
  })
  .meta({ id: 'WorkflowEvents' });

export type WorkflowEvents = z.infer<typeof eventsSchema>;
export type WebhookSpec = WorkflowEvents['webhooks'][number];
export type ScheduleSpec = WorkflowEvents['schedules'][number];

/** No webhooks, no schedules. */
export const NO_EVENTS: WorkflowEvents = { webhooks: [], schedules: [] };

/** The channels `deliver` may name: chat channels whose conversations have ids (Slack channels, Telegram chats). */
export function deliverableChannels(channels: readonly ChannelScope[]): string[] {
  return channels.filter((channel) => channel.narrowBinding !== undefined).map((channel) => channel.name);
}

/** The `deliver` values of `events` that name no deliverable channel, as field issues (`events.webhooks.0.deliver`). */
export function unknownDeliverIssues(events: WorkflowEvents, channels: readonly ChannelScope[]): Record<string, { code: string; message: string }[]> {
  const known = deliverableChannels(channels);
  const issues: Record<string, { code: string; message: string }[]> = {};
  for (const kind of ['webhooks', 'schedules'] as const) {
    events[kind].forEach((item, index) => {
      const channel = parseDeliverTarget(item.deliver)?.channel;
      if (channel && !known.includes(channel))
        issues[`events.${kind}.${index}.deliver`] = [
          { code: 'unknown_channel', message: `No chat channel "${channel}" to deliver to; one of ${known.map((name) => `${name}:<id>`).join(', ')}.` },
        ];
    });
  }
  return issues;
}
