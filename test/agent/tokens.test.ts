import { countTokens as exactCount } from 'gpt-tokenizer';
import { TOKENIZER_MAX_RUN, countTokens, tokenPieces } from '../../src/agent/tokens';

describe('token counting', () => {
  it('is exact for ordinary text', () => {
    const text = 'Deploy the payments service to production, then watch the dashboards. '.repeat(50);
    expect(countTokens(text)).toBe(exactCount(text));
    expect([...tokenPieces(text)].join('')).toBe(text);
  });

  it('counts a 65,536-character word in bounded pieces, close to the exact count', () => {
    const word = 'é'.repeat(65_536);
    expect(countTokens(word)).toBe(65_536); // each "é" is one token either way
    const mixed = `start ${'ab'.repeat(2_000)} end`;
    const exact = exactCount(mixed);
    expect(Math.abs(countTokens(mixed) - exact)).toBeLessThanOrEqual(Math.ceil(mixed.length / TOKENIZER_MAX_RUN) + 1);
    expect([...tokenPieces(mixed)].join('')).toBe(mixed);
  });
});
