import { STEM_CACHE_MAX_WORD, stemCacheSize, stems } from '../../src/routing/text';

describe('the stem cache', () => {
  it('does not grow with unique long tokens, and a 65,536-letter word does not block (Porter is quadratic)', () => {
    const before = stemCacheSize();
    const started = performance.now();
    for (let index = 0; index < 200; index += 1) stems(`${String(index).padStart(6, '0')}${'x'.repeat(65_530)}`);
    expect(performance.now() - started).toBeLessThan(2_000); // stemmed, 200 of them took ~30 minutes
    const after = stemCacheSize();
    expect(after.characters - before.characters).toBe(0);
  });

  it('caches ordinary words, each at most STEM_CACHE_MAX_WORD characters', () => {
    expect(stems('Deploying payments')).toEqual(['deploi', 'payment']);
    const { entries, characters } = stemCacheSize();
    expect(entries).toBeGreaterThanOrEqual(2);
    expect(characters).toBeLessThanOrEqual(entries * 2 * STEM_CACHE_MAX_WORD);
  });
});
