import { BuiltinProvider, composeAnswer } from '../../src/agent/providers/builtin';
import { countTokens } from '../../src/agent/tokens';

async function run(messages: { role: 'user' | 'assistant' | 'system'; content: string }[]) {
  const pieces: string[] = [];
  let usage: { inputTokens: number; outputTokens: number } | null = null;
  for await (const chunk of new BuiltinProvider().stream({ messages, signal: new AbortController().signal })) {
    if (chunk.type === 'text') pieces.push(chunk.text);
    else if (chunk.type === 'usage') usage = chunk;
  }
  return { pieces, usage };
}

describe('the builtin provider', () => {
  it('answers from the conversation: quotes the question and names its key terms, honestly', () => {
    const answer = composeAnswer([{ role: 'user', content: 'How do I rotate the database credentials?' }]);
    expect(answer).toContain('no language model is configured');
    expect(answer).toContain('You asked (7 words): "How do I rotate the database credentials?"');
    expect(answer).toContain('"rotate", "database" and "credentials"');
  });

  it('remembers earlier turns', () => {
    const answer = composeAnswer([
      { role: 'user', content: 'The staging database is down again' },
      { role: 'assistant', content: 'noted' },
      { role: 'user', content: 'Can you restart the database?' },
    ]);
    expect(answer).toContain('This is message 2 of yours in this conversation; you mentioned "database" before as well.');
    expect(answer).not.toContain('no language model is configured');
  });

  it('is deterministic and streams real tokens whose usage is counted with the same tokenizer', async () => {
    const messages = [{ role: 'user' as const, content: 'Summarise the incident timeline, please — 😀 included' }];
    const first = await run(messages);
    const second = await run(messages);
    expect(second.pieces).toEqual(first.pieces);
    const text = first.pieces.join('');
    expect(text).toBe(composeAnswer(messages));
    expect(first.pieces.length).toBe(countTokens(text));
    expect(first.usage).toEqual({ type: 'usage', inputTokens: countTokens(messages[0]!.content), outputTokens: countTokens(text) });
  });

  it('stops streaming when aborted', async () => {
    const controller = new AbortController();
    const pieces: string[] = [];
    for await (const chunk of new BuiltinProvider().stream({
      messages: [{ role: 'user', content: 'a long question about many things' }],
      signal: controller.signal,
    })) {
      if (chunk.type === 'text') pieces.push(chunk.text);
      if (pieces.length === 3) controller.abort();
    }
    expect(pieces).toHaveLength(3);
  });
});
