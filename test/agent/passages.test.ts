import { BuiltinProvider, composeAnswer } from '../../src/agent/providers/builtin';
import { countTokens } from '../../src/agent/tokens';
import { chunkText } from '../../src/knowledge/chunk';
import { formatPassages, parsePassages, PASSAGES_HEADER } from '../../src/agent/passages';

const hits = [
  { collectionId: 'c1', documentId: 'd1', title: 'Parking', text: 'Visitor parking is behind\nbuilding C.', score: 3.2 },
  { collectionId: 'c1', documentId: 'd2', title: 'Turbine manual', text: 'Turbine blades need inspection every 400 flight hours.', score: 2.1 },
  { collectionId: 'c2', documentId: 'd3', title: 'Canteen — menu', text: 'Lasagne on Thursdays.', score: 1.0 },
];

describe('knowledge passages in the system prompt', () => {
  it('renders the header and one numbered line per hit, and parses back', () => {
    const block = formatPassages(hits);
    expect(block.split('\n')).toEqual([
      PASSAGES_HEADER,
      '[1] Parking — Visitor parking is behind building C.',
      '[2] Turbine manual — Turbine blades need inspection every 400 flight hours.',
      '[3] Canteen - menu — Lasagne on Thursdays.',
    ]);
    expect(parsePassages(`You are helpful.\n\n${block}\n\nBe brief.`)).toEqual([
      { number: 1, title: 'Parking', text: 'Visitor parking is behind building C.' },
      { number: 2, title: 'Turbine manual', text: 'Turbine blades need inspection every 400 flight hours.' },
      { number: 3, title: 'Canteen - menu', text: 'Lasagne on Thursdays.' },
    ]);
    expect(formatPassages([])).toBe('');
    expect(parsePassages('No passages here.\n[1] Fake — entry')).toEqual([]);
  });

  it('makes the builtin provider answer from the passage that matches the question, naming its source', () => {
    const messages = [
      { role: 'system' as const, content: `You help engineers.\n\n${formatPassages(hits)}` },
      { role: 'user' as const, content: 'How often do turbine blades need an inspection?' },
    ];
    const answer = composeAnswer(messages);
    expect(answer).toContain('"Turbine blades need inspection every 400 flight hours."');
    expect(answer).toContain('(source: [2] Turbine manual)');
    expect(answer).toContain('See also [1] Parking; [3] Canteen - menu.');
    expect(composeAnswer(messages)).toBe(answer); // deterministic
    // Without passages it still answers from the conversation only.
    expect(composeAnswer(messages.slice(1))).not.toContain('knowledge base');
  });

  it('quotes the best-ranked passage when none shares a word with the question', () => {
    const answer = composeAnswer([
      { role: 'system', content: formatPassages(hits) },
      { role: 'user', content: 'Hmm?' },
    ]);
    expect(answer).toContain('"Visitor parking is behind building C." (source: [1] Parking)');
  });

  it('streams that answer token by token', async () => {
    const messages = [
      { role: 'system' as const, content: formatPassages(hits) },
      { role: 'user' as const, content: 'Where is visitor parking?' },
    ];
    let text = '';
    for await (const chunk of new BuiltinProvider().stream({ messages, tools: [], signal: new AbortController().signal } as never))
      if (chunk.type === 'text') text += chunk.text;
    expect(text).toBe(composeAnswer(messages));
    expect(text).toContain('[1] Parking');
  });
});

describe('chunking', () => {
  const sentence = (index: number) => `Sentence number ${index} talks about topic ${index} in some detail.`;

  it('keeps short paragraphs whole and together', () => {
    expect(chunkText('First paragraph.\n\nSecond paragraph.')).toEqual(['First paragraph.\n\nSecond paragraph.']);
  });

  it('cuts long text into chunks near the target size with overlapping sentences', () => {
    const text = Array.from({ length: 60 }, (_, index) => sentence(index)).join(' ');
    const chunks = chunkText(text, { targetTokens: 50, overlapTokens: 15 });
    expect(chunks.length).toBeGreaterThan(5);
    for (const chunk of chunks) expect(countTokens(chunk)).toBeLessThanOrEqual(50);
    for (let index = 1; index < chunks.length; index += 1) {
      const lastOfPrevious = chunks[index - 1].split(/(?<=\.)\s+/).at(-1)!;
      expect(chunks[index].startsWith(lastOfPrevious)).toBe(true);
    }
    for (let index = 0; index < 60; index += 1) expect(chunks.some((chunk) => chunk.includes(sentence(index)))).toBe(true);
  });

  it('cuts a sentence longer than a chunk by words, and a giant word by characters', () => {
    const words = Array.from({ length: 300 }, (_, index) => `word${index}`).join(' ');
    const chunks = chunkText(`${words} ${'x'.repeat(5000)}`, { targetTokens: 40, overlapTokens: 0 });
    for (const chunk of chunks) expect(countTokens(chunk)).toBeLessThanOrEqual(40);
    expect(chunks.join(' ')).toContain('word299');
  });
});
