import { literalHaystack, requiredLiteral } from '../../src/routing/regex-literal';

describe('the literal a trigger regex requires (the router skips the regex when a message lacks it)', () => {
  it.each([
    ['\\bTICKET-12\\d*\\b', 'ticket-12'],
    ['deploy(ing|ed)? to prod', ' to prod'],
    ['rollback\\s+now', 'rollback'],
    ['(?:ab)+cdef', 'cdef'],
    ['colou?r scheme', 'r scheme'],
    ['a{0,3}bcd', 'bcd'],
    ['version \\d+\\.\\d+ released', ' released'],
    ['^INC-\\d{4}$', 'inc-'],
    ['wow+ such', ' such'],
    ['ab{2}cdefg', 'cdefg'],
  ])('%s → %s', (source, literal) => {
    expect(requiredLiteral(source)).toBe(literal);
  });

  it.each([
    'alpha|beta', // either side may match
    '[abc]{3}\\d+', // nothing literal at the top level
    '\\u0041BCDEF', // escapes that name other characters
    '\\x41bcdef',
    '(deploy) \\1 again', // backreferences
    'ab', // too short to be worth a lookup
    'café au lait', // not ASCII: case folding is left to the regex
  ])('%s has none', (source) => {
    expect(requiredLiteral(source)).toBeNull();
  });

  it('never skips a regex that would match: every match contains its literal (case-insensitively)', () => {
    const cases: [string, string[]][] = [
      ['\\bTICKET-12\\d*\\b', ['see ticket-12 now', 'TICKET-1299', 'Ticket-12.']],
      ['colou?r scheme', ['the color scheme', 'COLOUR SCHEME']],
      ['wow+ such', ['wowww such doge']],
      ['^INC-\\d{4}$', ['inc-2026']],
      ['kube(ctl)? apply', ['\u212Aube apply']], // the Kelvin sign matches k under /iu
      ['stat(us)? page', ['\u017Ftatus page']], // the long s matches s under /iu
    ];
    for (const [source, texts] of cases) {
      const pattern = new RegExp(source, 'iu');
      const literal = requiredLiteral(source);
      for (const text of texts) {
        expect(pattern.test(text)).toBe(true);
        if (literal !== null) expect(literalHaystack(text).includes(literal)).toBe(true);
      }
    }
  });
});
