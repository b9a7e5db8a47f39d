import { probeRegexCosts, timesOutEveryTime, type ProbeInput } from '../../src/workflows/regex-probe';

const INPUT: Omit<ProbeInput, 'patterns'> = { budgetMs: 20, attempts: 3, backtrackingProbeChars: 40, backtrackingTimeoutMs: 100 };

describe('the trigger regex cost probe', () => {
  it('refuses an exponential pattern and passes the example workflows’ patterns', () => {
    const [exponential, seats, plain] = probeRegexCosts({ ...INPUT, patterns: ['(x|x)*y', String.raw`\b\d{1,6} ?(?:seats|users|licen[cs]es)\b`, 'refund'] });
    expect(exponential).toEqual({ kind: 'backtracking' });
    expect(seats).toEqual({ kind: 'ok' });
    expect(plain).toEqual({ kind: 'ok' });
  });

  it('counts a probe as out of time only when every attempt runs out: a stalled machine slows one, not all', () => {
    const stalledOnce = () => {
      let calls = 0;
      return () => {
        calls += 1;
        if (calls === 1) throw new Error('Script execution timed out after 100ms');
      };
    };
    expect(timesOutEveryTime(3, stalledOnce())).toBe(false);
    let tries = 0;
    expect(
      timesOutEveryTime(3, () => {
        tries += 1;
        throw new Error('Script execution timed out after 100ms');
      }),
    ).toBe(true);
    expect(tries).toBe(3);
    let fast = 0;
    expect(timesOutEveryTime(3, () => void (fast += 1))).toBe(false);
    expect(fast).toBe(1);
  });
});
