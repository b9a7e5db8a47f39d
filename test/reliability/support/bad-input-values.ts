import fc from 'fast-check';

/**
 * Generators shared by the bad-input files: hostile strings, numbers, ids and JSON values. The seed
 * is fixed (printed with the figures) so a failure reproduces; BAD_INPUT_SEED picks another.
 */
export const SEED = Number(process.env.BAD_INPUT_SEED ?? 19_0001);

/** Draws `count` values of `arbitrary` reproducibly (`offset` keeps the classes of one file apart). */
export function draw<T>(arbitrary: fc.Arbitrary<T>, count: number, offset: number): T[] {
  return count <= 0 ? [] : fc.sample(arbitrary, { numRuns: count, seed: SEED + offset });
}

/** Characters that break naive code: lone surrogates, NUL, bidi controls, BOM, joiners, combining marks. */
export const EDGE_CHARACTERS = [
  '\ud800',
  '\udbff',
  '\udc00',
  '\udfff',
  '\u0000',
  '\u202e',
  '\u202d',
  '\u200f',
  '\u200e',
  '\u061c',
  '\u2066',
  '\u2069',
  '\ufeff',
  '\u200d',
  '\u0301',
  '\uffff',
  '\ufffe',
  '\u2028',
  '\u2029',
  '\u0085',
  '\x7f',
  '\x1b',
  '😀',
  '👩‍👩‍👧',
  '中',
  'é',
  'ﷺ',
  '\u{10ffff}',
] as const;

/** A string mixing edge characters into ordinary and arbitrary (any code unit) text. */
export const hostileString = (maxLength = 40): fc.Arbitrary<string> =>
  fc
    .array(
      fc.oneof(
        { weight: 3, arbitrary: fc.constantFrom(...EDGE_CHARACTERS) },
        { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 6 }) },
        { weight: 2, arbitrary: fc.string({ maxLength: 6 }) },
      ),
      {
        minLength: 1,
        maxLength: Math.max(1, Math.floor(maxLength / 3)),
      },
    )
    .map((parts) => parts.join('').slice(0, maxLength));

/** Numbers and number-like text no id or counter should choke on. */
export const ODD_NUMBERS = [
  '-1',
  '0',
  '-0',
  '1.5',
  String(2 ** 50),
  String(2 ** 50 + 1),
  String(2 ** 53),
  String(2 ** 53 + 1),
  String(2 ** 64),
  '9'.repeat(400),
  'NaN',
  'Infinity',
  '-Infinity',
  '1e309',
  '-1e309',
  '0x10',
  '1_000',
  ' 1',
  '1 ',
  '+1',
  '',
  '%00',
  'null',
  'undefined',
  'true',
  '[]',
  '{}',
];

/** Things that are not a (v4) session or message id. */
export const notUuid = (): fc.Arbitrary<string> =>
  fc.oneof(
    fc.constantFrom(...ODD_NUMBERS),
    fc.uuid().map((id) => id.toUpperCase()),
    fc.uuid().map((id) => ` ${id}`),
    fc.uuid().map((id) => `${id}x`),
    fc.uuid().map((id) => id.replaceAll('-', '')),
    fc.uuid(), // well-formed, but nobody's
    fc.string({ unit: 'binary', minLength: 1, maxLength: 60 }),
    fc.constant('x'.repeat(5_000)),
  );

/** Any JSON-able value with wrong types in every position: what a confused client sends. */
export const anyJson = (): fc.Arbitrary<unknown> =>
  fc.oneof(
    { weight: 3, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
    { weight: 1, arbitrary: fc.constantFrom(null, true, 0, -1, 2 ** 53, 1e308, '', [], {}, [null], { $gt: '' }) },
    { weight: 1, arbitrary: hostileString() },
  );

/** `{"a":{"a":…}}` or `[[…]]` nested `levels` deep, as text (JSON.stringify recurses). */
export function nested(levels: number, kind: 'object' | 'array', leaf = '1'): string {
  return kind === 'object' ? '{"a":'.repeat(levels) + leaf + '}'.repeat(levels) : '['.repeat(levels) + leaf + ']'.repeat(levels);
}

/** A string of exactly `count` characters (code points, as the documented limits count them) from `alphabet`. */
export function ofLength(count: number, alphabet: string): string {
  const characters = [...alphabet];
  return Array.from({ length: Math.max(0, count) }, (_, index) => characters[index % characters.length]).join('');
}

/** Path segments that try to leave a directory, in the spellings servers and file systems accept. */
export const TRAVERSALS = [
  '../../../../etc/passwd',
  '..\\..\\..\\windows\\win.ini',
  '/etc/passwd',
  'C:\\Windows\\win.ini',
  '....//....//etc/passwd',
  '..%2f..%2fetc%2fpasswd',
  '%2e%2e/%2e%2e/etc/passwd',
  '..%252f..%252fetc',
  '..',
  '.',
  './',
  'a/../../b',
  'a/./../..',
  '\u0000../x',
  '..\u2215..\u2215etc',
  '．．/．．/etc',
  '~/.ssh/id_rsa',
  'a/'.repeat(40) + 'deep',
  'CON',
  'aux.txt',
  '.git/config',
  '.env',
  'data/switchboard.sqlite',
] as const;
