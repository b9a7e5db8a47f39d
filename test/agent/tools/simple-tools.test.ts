import { evaluate } from '../../../src/agent/tools/arithmetic';
import type { KnowledgeSearch } from '../../../src/agent/tools';
import { call, context, refusal, registry } from './tool-harness';

const FIXED = new Date('2025-03-09T14:05:06.000Z');

describe('current_time', () => {
  const tools = registry({}, { now: () => FIXED });

  it('gives UTC by default', async () => {
    expect(await call(tools, 'current_time', '{}')).toEqual({
      utc: '2025-03-09T14:05:06.000Z',
      timezone: 'UTC',
      local: '2025-03-09T14:05:06Z',
      weekday: 'Sunday',
      utc_offset: '+00:00',
    });
  });

  it('gives the local time of an IANA zone', async () => {
    expect(await call(tools, 'current_time', '{"timezone":"Asia/Kolkata"}')).toMatchObject({
      local: '2025-03-09T19:35:06+05:30',
      utc_offset: '+05:30',
      weekday: 'Sunday',
    });
  });

  it('refuses an unknown zone and a wrong type', async () => {
    expect((await refusal(call(tools, 'current_time', '{"timezone":"Mars/Olympus"}'))).message).toBe(
      'Unknown time zone "Mars/Olympus": use an IANA name such as "Europe/Paris" or "UTC".',
    );
    expect(tools.validate('current_time', '{"timezone": 5}')).toEqual({ ok: false, error: 'Invalid arguments for current_time: timezone must be string.' });
  });
});

describe('calculator', () => {
  it.each([
    ['1 + 2 * 3', 7],
    ['(1 + 2) * 3', 9],
    ['2 ^ 3 ^ 2', 512],
    ['-2 ^ 2', -4],
    ['2 ** -1', 0.5],
    ['10 % 4', 2],
    ['sqrt(16) + abs(-3)', 7],
    ['round(pi, 2)', 3.14],
    ['max(1, 7, 3) - min(4, 2)', 5],
    ['log(1000)', 3],
    ['log(8, 2)', 3],
    ['1.5e3 / .5', 3000],
    ['6 × 7 ÷ 2', 21],
  ])('%s = %d', (expression, expected) => {
    expect(evaluate(expression)).toBeCloseTo(expected, 10);
  });

  it('returns the expression and its result', async () => {
    expect(await call(registry(), 'calculator', '{"expression":"(1200 * 1.05) / 12"}')).toEqual({ expression: '(1200 * 1.05) / 12', result: 105 });
  });

  it.each([
    ['1 / 0', 'the result is infinite (e.g. a division by zero)'],
    ['sqrt(-1)', 'the result is not a number (e.g. the square root of a negative number)'],
    ['process.exit(1)', 'unexpected character "." at position 8'],
    ['process', 'unknown name "process"'],
    ['__proto__', 'unknown name "__proto__"'],
    ['constructor', 'unknown name "constructor"'],
    ['1 +', 'the expression ends too early'],
    ['(1 + 2', 'expected ")" at the end'],
    ['2 3', 'unexpected "3" at position 3'],
    ['1; 2', 'unexpected character ";" at position 2'],
    ['sqrt(1, 2)', 'sqrt takes 1 argument, not 2'],
    ['"a"', 'unexpected character'],
  ])('refuses %s', async (expression, reason) => {
    const error = await refusal(call(registry(), 'calculator', JSON.stringify({ expression })));
    expect(error.name).toBe('ToolError');
    expect(error.message).toContain(reason);
  });

  it('refuses nesting deeper than its limit instead of overflowing the stack', () => {
    expect(() => evaluate(`${'('.repeat(200)}1${')'.repeat(200)}`)).toThrow(/nested too deeply/);
    expect(() => evaluate('-'.repeat(500) + '1')).toThrow(/nested too deeply/);
  });

  it('refuses a missing expression by schema', () => {
    expect(registry().validate('calculator', '{}')).toEqual({ ok: false, error: 'Invalid arguments for calculator: missing required property "expression".' });
  });
});

describe('knowledge_search', () => {
  const knowledge: KnowledgeSearch & { calls: unknown[] } = {
    calls: [],
    async collectionsFor(sessionId) {
      return sessionId === 'session-1' ? ['handbook'] : [];
    },
    async search(collectionIds, query, topK) {
      this.calls.push({ collectionIds, query, topK });
      return [{ collectionId: 'handbook', documentId: 'doc-1', title: 'Leave policy', text: 'Twenty-five days.', score: 3.2 }];
    },
  };

  it('searches the session’s collections with the default top_k', async () => {
    const result = await call(registry({}, { knowledge }), 'knowledge_search', '{"query":"holidays"}');
    expect(result).toEqual({
      query: 'holidays',
      results: [{ collection_id: 'handbook', document_id: 'doc-1', title: 'Leave policy', text: 'Twenty-five days.', score: 3.2 }],
    });
    expect(knowledge.calls.at(-1)).toEqual({ collectionIds: ['handbook'], query: 'holidays', topK: 5 });
  });

  it('refuses when the session has no collections, and top_k out of range', async () => {
    const tools = registry({}, { knowledge });
    const error = await refusal(tools.get('knowledge_search')!.run({ query: 'x', top_k: 5 }, { ...context(), sessionId: 'other' }));
    expect(error.message).toBe("This conversation's workflow has no knowledge collections to search.");
    expect(tools.validate('knowledge_search', '{"query":"x","top_k":50}')).toEqual({
      ok: false,
      error: 'Invalid arguments for knowledge_search: top_k must be <= 20.',
    });
  });

  it('refuses to run without a knowledge service', async () => {
    expect((await refusal(call(registry(), 'knowledge_search', '{"query":"x"}'))).message).toBe('Knowledge collections are not configured on this hub.');
  });
});
