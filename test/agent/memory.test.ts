import { BuiltinProvider } from '../../src/agent/providers/builtin';
import { compact, extractiveSummary, fitToBudget, messageTokens, type MemoryEntry } from '../../src/agent/memory';

const entry = (ordinal: number, turnId: string, role: 'user' | 'assistant', content: string): MemoryEntry => ({
  ordinal,
  turnId,
  message: { role, content },
  tokens: messageTokens({ role, content }),
});

function conversation(turns: number): MemoryEntry[] {
  return Array.from({ length: turns }, (_, index) => [
    entry(index * 2 + 1, `t${index}`, 'user', `Question ${index}: how do we deploy service ${index}? It matters because the release is close.`),
    entry(index * 2 + 2, `t${index}`, 'assistant', `Deploy service ${index} with the pipeline. Therefore run the checks first. Then ship.`),
  ]).flat();
}

describe('memory', () => {
  it('with the builtin model compacts extractively (summarized: false) and keeps the newest turns verbatim', async () => {
    const entries = conversation(12);
    const result = await compact({
      systemPrompt: 'sys',
      summary: null,
      entries,
      budget: 300,
      mode: 'conversation',
      provider: new BuiltinProvider(),
      signal: new AbortController().signal,
    });
    expect(result).toMatchObject({ summarized: false, through: expect.any(Number) });
    // A rolling summary: the most recent folded turns are in it; older lines give way to its size limit.
    const lastFolded = result!.through / 2 - 1;
    expect(result!.summary).toContain(`- user: Question ${lastFolded}: how do we deploy service ${lastFolded}?`);
    expect(result!.summary.split('\n').every((line) => line.startsWith('- user: ') || line.startsWith('- assistant: '))).toBe(true);
    expect(result!.through).toBeLessThanOrEqual(20); // the last two turns (ordinals 21–24) stay
    expect(result!.tokensUsed).toBeLessThan(300);
  });

  it('does nothing while the conversation fits', async () => {
    expect(
      await compact({
        systemPrompt: 'sys',
        summary: null,
        entries: conversation(1),
        budget: 5000,
        mode: 'conversation',
        provider: new BuiltinProvider(),
        signal: new AbortController().signal,
      }),
    ).toBeNull();
  });

  it('extracts by mode: conclusions for reasoning, files and code for code', () => {
    const folded = [
      entry(1, 't', 'assistant', 'We looked at it. Therefore the cache must go. Done.'),
      entry(2, 't', 'user', 'See src/app.ts:\n```ts\nconst x = 1;\n```'),
    ];
    expect(extractiveSummary(null, folded, 'reasoning')).toContain('Therefore the cache must go.');
    expect(extractiveSummary(null, folded, 'code')).toContain('- user: See src/app.ts: | files: src/app.ts | code: const x = 1;');
  });

  it('fits whole turns into a budget for one call, newest first, never splitting a turn', () => {
    const messages = fitToBudget({ role: 'system', content: 'sys' }, conversation(10), 120);
    expect(messages[0]).toEqual({ role: 'system', content: 'sys' });
    expect(messages.length % 2).toBe(1); // system + whole (user, assistant) pairs
    expect(messages.at(-1)!.content).toContain('service 9');
  });
});
