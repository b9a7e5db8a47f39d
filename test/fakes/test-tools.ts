import type { ToolCatalog, Validation } from '../../src/agent/tool-box';
import type { Tool } from '../../src/agent/tools/tool';

/**
 * Tools for pipeline tests (fixtures implementing the Tool contract): they record what they did, so
 * tests can see exactly which calls ran. Validation: JSON, and the schema's required string fields.
 */
export class TestTools implements ToolCatalog {
  readonly runs: { tool: string; input: Record<string, unknown> }[] = [];
  private readonly tools: Tool[];

  constructor() {
    const record = (tool: string) => async (input: Record<string, unknown>) => {
      this.runs.push({ tool, input });
      return { ok: true, echoed: input };
    };
    const base = { web: false, sideEffects: false, requiresConfirmation: false, availability: () => ({ ok: true as const }) };
    this.tools = [
      { ...base, name: 'lookup', description: 'Looks a word up.', parameters: schema(['word']), run: record('lookup') },
      { ...base, name: 'web_lookup', description: 'Looks something up on the web.', parameters: schema(['query']), web: true, run: record('web_lookup') },
      {
        ...base,
        name: 'save_note',
        description: 'Saves a note (needs confirmation).',
        parameters: schema(['text']),
        requiresConfirmation: true,
        sideEffects: true,
        run: record('save_note'),
      },
      { ...base, name: 'broken', description: 'Always fails.', parameters: schema([]), run: async () => Promise.reject(new Error('the tool broke')) },
      {
        ...base,
        name: 'needs_key',
        description: 'Needs an API key.',
        parameters: schema([]),
        availability: () => ({ ok: false, reason: 'no API key is configured' }),
        run: record('needs_key'),
      },
    ];
  }

  list(): Tool[] {
    return this.tools;
  }

  get(name: string): Tool | undefined {
    return this.tools.find((tool) => tool.name === name);
  }

  validate(name: string, rawArguments: string): Validation {
    const tool = this.get(name);
    if (!tool) return { ok: false, error: `unknown tool ${name}` };
    let input: unknown;
    try {
      input = JSON.parse(rawArguments);
    } catch {
      return { ok: false, error: 'the arguments are not valid JSON' };
    }
    if (typeof input !== 'object' || input === null) return { ok: false, error: 'the arguments must be an object' };
    for (const field of (tool.parameters.required as string[]) ?? []) {
      if (typeof (input as Record<string, unknown>)[field] !== 'string') return { ok: false, error: `${field} is required` };
    }
    return { ok: true, input: input as Record<string, unknown> };
  }
}

function schema(required: string[]): Record<string, unknown> {
  return { type: 'object', properties: Object.fromEntries(required.map((name) => [name, { type: 'string' }])), required };
}
