import { KNOWLEDGE_DEFAULTS } from '../../src/knowledge/limits';
import { textBatches } from '../../src/knowledge/batches';

/** Chunk rows are written in INSERTs bounded by rows and by text, every row once, in order. */
describe('chunk insert batches', () => {
  const rows = (count: number, chars: number) => Array.from({ length: count }, (_, position) => ({ position, text: 'x'.repeat(chars) }));

  it('short chunks: bounded by the row count', () => {
    const batches = textBatches(rows(1_201, 10), (row) => row.text);
    expect(batches.map((batch) => batch.length)).toEqual([500, 500, 201]);
  });

  it('long chunks: bounded by the text, every row kept once and in order', () => {
    const all = rows(1_000, 3_000);
    const batches = textBatches(all, (row) => row.text);
    for (const batch of batches) expect(batch.reduce((sum, row) => sum + row.text.length, 0)).toBeLessThanOrEqual(KNOWLEDGE_DEFAULTS.insertBatchChars);
    expect(batches.length).toBe(Math.ceil(1_000 / Math.floor(KNOWLEDGE_DEFAULTS.insertBatchChars / 3_000)));
    expect(batches.flat().map((row) => row.position)).toEqual(all.map((row) => row.position));
  });

  it('a chunk longer than the text bound goes alone; nothing is empty', () => {
    const batches = textBatches([{ text: 'x'.repeat(KNOWLEDGE_DEFAULTS.insertBatchChars * 2) }, { text: 'y' }], (row) => row.text);
    expect(batches.map((batch) => batch.length)).toEqual([1, 1]);
    expect(textBatches([], (row: { text: string }) => row.text)).toEqual([]);
  });
});
