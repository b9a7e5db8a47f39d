/**
 * Rate-limit specs (spec, Limits rule 1): `<N>/<window>`, window one of second/s, minute/m, hour/h,
 * day/d, case-insensitive, optional trailing `s`, spaces tolerated around each part. N is a positive
 * integer. Anything else is refused, so a typo fails startup instead of silently meaning something.
 */

/** Length of each window unit in milliseconds. */
export const WINDOW_UNIT_MS = {
  second: 1_000,
  minute: 60_000,
  hour: 3_600_000,
  day: 86_400_000,
} as const;

export type WindowUnit = keyof typeof WINDOW_UNIT_MS;

/** A parsed spec: at most `limit` requests in any moving window of `windowMs`. */
export interface RateLimitRule {
  limit: number;
  windowMs: number;
  /** The spec as written (trimmed), for messages. */
  text: string;
}

export type ParsedSpec = { ok: true; rule: RateLimitRule } | { ok: false; reason: string };

const UNIT_BY_NAME: Readonly<Record<string, WindowUnit>> = {
  s: 'second',
  second: 'second',
  m: 'minute',
  minute: 'minute',
  h: 'hour',
  hour: 'hour',
  d: 'day',
  day: 'day',
};

// Digits only: no sign, no decimals, no exponent ("1e3" would otherwise slip through Number()).
const SPEC_PATTERN = /^\s*(\d+)\s*\/\s*([a-z]+)\s*$/i;

export const SPEC_FORMAT_HINT = 'expected "<N>/<second|minute|hour|day>", e.g. "5/minute"';

/** Parses a spec; never throws. */
export function parseRateLimitSpec(value: unknown): ParsedSpec {
  if (typeof value !== 'string') return { ok: false, reason: `${SPEC_FORMAT_HINT}, got ${describe(value)}` };
  const match = SPEC_PATTERN.exec(value);
  if (!match) return { ok: false, reason: `${SPEC_FORMAT_HINT}, got ${JSON.stringify(value)}` };
  const [, digits, word] = match as unknown as [string, string, string];
  const limit = Number(digits);
  if (limit < 1 || !Number.isSafeInteger(limit)) {
    return { ok: false, reason: `the request count must be a positive integer, got ${JSON.stringify(value)}` };
  }
  const lowered = word.toLowerCase();
  // The optional trailing `s` ("minutes", "ms"?): "ms" must not become "m"; only whole names and
  // their plurals, or the bare letters, are accepted.
  const unit = UNIT_BY_NAME[lowered] ?? (lowered.length > 2 && lowered.endsWith('s') ? UNIT_BY_NAME[lowered.slice(0, -1)] : undefined);
  if (unit === undefined) {
    return { ok: false, reason: `unknown window ${JSON.stringify(word)}: ${SPEC_FORMAT_HINT}` };
  }
  return { ok: true, rule: { limit, windowMs: WINDOW_UNIT_MS[unit], text: value.trim() } };
}

/** Parses a spec that configuration has already validated; throws if it is malformed. */
export function ruleFromSpec(value: string): RateLimitRule {
  const parsed = parseRateLimitSpec(value);
  if (!parsed.ok) throw new Error(`invalid rate-limit spec: ${parsed.reason}`);
  return parsed.rule;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  return typeof value === 'object' ? 'a mapping' : `${typeof value} ${String(value)}`;
}
