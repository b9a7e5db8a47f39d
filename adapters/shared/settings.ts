import { z } from 'zod';
import { MID_TURN_POLICIES } from '../../src/core/turns';
import type { SendBudgetLimits } from './send-budget';

/**
 * `mid_turn` of a chat channel's section: what a message sent while its conversation's turn runs
 * does (src/core/turns.ts, MidTurnPolicy); a workflow's own `mid_turn` wins.
 */
export const midTurnSetting = z.enum(MID_TURN_POLICIES).default('queue');

/** At most `limit` sends in any `window_ms` (a sliding window; send-budget.ts). */
export function sendWindowSetting(limit: number, windowMs: number) {
  return z
    .strictObject({ limit: z.number().int().positive().max(100_000).default(limit), window_ms: z.number().int().positive().max(3_600_000).default(windowMs) })
    .prefault({});
}

/** A section's `{limit, window_ms}` pairs as SendBudget limits. */
export function sendBudgetLimits(perChat: { limit: number; window_ms: number }, overall: { limit: number; window_ms: number }): SendBudgetLimits {
  return { perChat: { limit: perChat.limit, windowMs: perChat.window_ms }, global: { limit: overall.limit, windowMs: overall.window_ms } };
}
