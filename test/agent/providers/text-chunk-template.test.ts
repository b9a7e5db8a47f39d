import { TextChunkTemplate } from '../../../src/agent/providers/text-chunk-template';

/** An OpenAI-style chunk's text, as the OpenAI provider asks for it (only a chunk that is text and nothing else). */
function contentOf(parsed: unknown): string | undefined {
  const chunk = parsed as { choices?: { delta?: { content?: unknown; tool_calls?: unknown }; finish_reason?: unknown }[] };
  const choice = chunk.choices?.[0];
  if (chunk.choices?.length !== 1 || choice?.finish_reason || choice?.delta?.tool_calls) return undefined;
  return typeof choice?.delta?.content === 'string' ? choice.delta.content : undefined;
}

function chunk(content: string, id = 'chatcmpl-1', extra: Record<string, unknown> = {}): string {
  return JSON.stringify({ id, object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content }, finish_reason: null }], ...extra });
}

/** A template that has parsed (and learnt from) `first`. */
function learnt(first: string): TextChunkTemplate {
  const template = new TextChunkTemplate('content', contentOf);
  expect(template.read(first)).toBeUndefined(); // nothing learnt yet
  template.learn(first, JSON.parse(first));
  return template;
}

describe('TextChunkTemplate (reading text chunks that differ only in their text)', () => {
  it('reads the text of a chunk that is the learnt one with another text, as JSON.parse would', () => {
    const template = learnt(chunk('Hel'));
    for (const text of ['lo', '', ' there', 'a "quoted" word', 'back\\slash', 'line\nbreak\ttab', 'é ü 你好 🎉', '\u0001', '"},"x":"', '\\"']) {
      expect(template.read(chunk(text))).toBe(text);
    }
    // Escapes a server may use where JSON.stringify would not: still the same text.
    expect(template.read(chunk('x').replace('"x"', '"\\u00e9\\/"'))).toBe('é/');
  });

  it('parses (answers undefined) every chunk that differs anywhere else', () => {
    const template = learnt(chunk('Hel'));
    expect(template.read(chunk('lo', 'chatcmpl-2'))).toBeUndefined(); // another id
    expect(template.read(chunk('lo', 'chatcmpl-1', { usage: null }))).toBeUndefined(); // another field
    expect(
      template.read(
        JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: 'lo' }, finish_reason: 'stop' }] }),
      ),
    ).toBeUndefined();
    // Text between the remembered parts that is not one JSON string changes the chunk's shape.
    const split = `${chunk('').slice(0, chunk('').indexOf('"content":"') + 11)}a","role":"assistant${chunk('').slice(chunk('').indexOf('"content":"') + 11)}`;
    expect(JSON.parse(split).choices[0].delta).toEqual({ content: 'a', role: 'assistant' });
    expect(template.read(split)).toBeUndefined();
    expect(template.read(chunk('x').replace('"x"', '"bad \\q escape"'))).toBeUndefined(); // JSON.parse refuses it too
    expect(template.read('not json')).toBeUndefined();
  });

  it('learns nothing from a chunk that is not text alone, or whose text cannot be placed for sure', () => {
    const finish = new TextChunkTemplate('content', contentOf);
    const finished = JSON.stringify({ id: 'c', choices: [{ index: 0, delta: { content: 'a' }, finish_reason: 'stop' }] });
    finish.learn(finished, JSON.parse(finished));
    expect(finish.read(finished.replace('"a"', '"b"'))).toBeUndefined();

    // The text's JSON twice in the chunk (a field elsewhere holds the same): which one is the text is not known.
    const twice = chunk('same', 'c', { echo: { content: 'same' } });
    const ambiguous = new TextChunkTemplate('content', contentOf);
    ambiguous.learn(twice, JSON.parse(twice));
    expect(ambiguous.read(twice.replace('"same"', '"other"'))).toBeUndefined();

    // The text sent encoded otherwise than JSON.stringify would, and another field holding it as JSON.stringify would:
    // the one found is not the text, and the marker's parse shows it.
    const decoy = chunk('x', 'c', { echo: { content: 'a' } }).replace('"content":"x"', '"content":"\\u0061"');
    expect(contentOf(JSON.parse(decoy))).toBe('a');
    const misled = new TextChunkTemplate('content', contentOf);
    misled.learn(decoy, JSON.parse(decoy));
    expect(misled.read(decoy.replace('"content":"a"', '"content":"b"'))).toBeUndefined();
  });

  it('learns again when the chunks change (a new second in `created`), and stops after templates that were never used', () => {
    const template = learnt(chunk('a', 'c', { created: 1 }));
    expect(template.read(chunk('b', 'c', { created: 1 }))).toBe('b');
    const later = chunk('c', 'c', { created: 2 });
    expect(template.read(later)).toBeUndefined();
    template.learn(later, JSON.parse(later));
    expect(template.read(chunk('d', 'c', { created: 2 }))).toBe('d');

    // A server whose every chunk differs (OpenAI's random `obfuscation` field): after three unused templates, no more are learnt.
    const noisy = new TextChunkTemplate('content', contentOf);
    for (let index = 0; index < 5; index += 1) {
      const data = chunk('t', 'c', { obfuscation: 'x'.repeat(index + 1) });
      expect(noisy.read(data)).toBeUndefined();
      noisy.learn(data, JSON.parse(data));
    }
    expect(noisy.read(chunk('u', 'c', { obfuscation: 'xxxxx' }))).toBeUndefined(); // the fifth was not learnt
    expect(noisy.read(chunk('u', 'c', { obfuscation: 'xxxx' }))).toBe('u'); // the fourth was the last
  });
});
