import { rateLimitSpec } from '../../src/config/schema';
import { parseRateLimitSpec, WINDOW_UNIT_MS } from '../../src/ratelimit';

const { second, minute, hour, day } = WINDOW_UNIT_MS;

describe('parseRateLimitSpec accepts "<N>/<window>" (spec, Limits rule 1)', () => {
  const accepted: [string, number, number][] = [
    ['5/minute', 5, minute],
    ['5/minutes', 5, minute],
    ['5/m', 5, minute],
    ['5/MINUTE', 5, minute],
    ['5/Minutes', 5, minute],
    ['3/hour', 3, hour],
    ['3/hours', 3, hour],
    ['3/h', 3, hour],
    ['3/H', 3, hour],
    ['120/second', 120, second],
    ['120/seconds', 120, second],
    ['120/s', 120, second],
    ['1/day', 1, day],
    ['1/days', 1, day],
    ['1/d', 1, day],
    ['  7/minute  ', 7, minute],
    ['\t7 / minute\n', 7, minute],
    ['007/s', 7, second],
    ['1000000000/second', 1_000_000_000, second],
  ];
  it.each(accepted)('%j → %d per %d ms', (text, limit, windowMs) => {
    expect(parseRateLimitSpec(text)).toEqual({ ok: true, rule: { limit, windowMs, text: text.trim() } });
  });
});

describe('parseRateLimitSpec refuses everything else', () => {
  const refused: unknown[] = [
    '',
    '   ',
    '5',
    '/minute',
    '5/',
    '0/minute',
    '-5/minute',
    '+5/minute',
    '5.5/minute',
    '1e3/minute',
    '5/fortnight',
    '5/week',
    '5/ms',
    '5/mins',
    '5/hr',
    '5/ss',
    '5/minutess',
    '5 per minute',
    '5/2minutes',
    '5/minute/extra',
    'five/minute',
    '5//minute',
    '99999999999999999999/minute',
    5,
    null,
    ['5/minute'],
  ];
  it.each(refused.map((value) => [value]))('%j', (value) => {
    const parsed = parseRateLimitSpec(value);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.reason).toMatch(/<N>\/<second\|minute\|hour\|day>|positive integer/);
  });
});

describe('rateLimitSpec (the config schema type)', () => {
  it('checks the built-in default like any other value, so a malformed default cannot start', () => {
    expect(rateLimitSpec('5/minute').parse(undefined)).toBe('5/minute');
    const result = rateLimitSpec('5/fortnight').safeParse(undefined);
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.message).toMatch(/unknown window "fortnight"/);
  });

  it('stores the value trimmed', () => {
    expect(rateLimitSpec('5/minute').parse('  9 / Hours ')).toBe('9 / Hours');
  });
});
