import { MAX_LAST_SEQ, parseLastSeq } from '../../../adapters/web/web-adapter';

describe('?last_seq', () => {
  it('takes integers from -1 to 2^50; more negative means everything kept', () => {
    expect(parseLastSeq('0')).toBe(0);
    expect(parseLastSeq('41')).toBe(41);
    expect(parseLastSeq('-1')).toBe(-1);
    expect(parseLastSeq('-99')).toBe(-1);
    expect(parseLastSeq(String(MAX_LAST_SEQ))).toBe(2 ** 50);
  });

  it('ignores (no replay) what is not such an integer: above 2^50, 2^53, NaN, exponents, digits past 16', () => {
    for (const value of [String(2 ** 50 + 1), String(2 ** 53), '9'.repeat(400), 'NaN', '1e3', '1.5', ' 1', '', '0x10', 'Infinity'])
      expect(parseLastSeq(value)).toBeNull();
    expect(parseLastSeq(null)).toBeNull();
  });
});
