import { ToolRegistry } from '../../../src/agent/tools';
import type { Tool } from '../../../src/agent/tools/tool';
import { registry } from './tool-harness';

function echoTool(overrides: Partial<Tool> = {}): Tool {
  return {
    name: 'echo',
    description: 'Echo.',
    parameters: {
      type: 'object',
      properties: { text: { type: 'string' }, times: { type: 'integer', minimum: 1, default: 1 } },
      required: ['text'],
      additionalProperties: false,
    },
    requiresConfirmation: false,
    web: false,
    sideEffects: false,
    availability: () => ({ ok: true }),
    run: async (input) => input,
    ...overrides,
  };
}

describe('ToolRegistry', () => {
  it('registers, lists, gets and describes tools for the model', () => {
    const tools = new ToolRegistry().register(echoTool());
    expect(tools.list().map((tool) => tool.name)).toEqual(['echo']);
    expect(tools.get('echo')?.description).toBe('Echo.');
    expect(tools.get('missing')).toBeUndefined();
    expect(tools.specs()).toEqual([{ name: 'echo', description: 'Echo.', parameters: echoTool().parameters }]);
    expect(tools.specs(['missing'])).toEqual([]);
  });

  it('refuses a duplicate name and a schema with an unknown keyword', () => {
    const tools = new ToolRegistry().register(echoTool());
    expect(() => tools.register(echoTool())).toThrow('tool "echo" is already registered');
    expect(() => new ToolRegistry().register(echoTool({ name: 'typo', parameters: { type: 'object', propertees: {} } }))).toThrow(/unknown keyword/);
    expect(() => new ToolRegistry().register(echoTool({ name: 'array', parameters: { type: 'array' } }))).toThrow(/type "object"/);
  });

  it('accepts valid arguments and fills in schema defaults', () => {
    expect(new ToolRegistry().register(echoTool()).validate('echo', '{"text":"hi"}')).toEqual({ ok: true, input: { text: 'hi', times: 1 } });
  });

  it('explains invalid JSON, non-objects, schema violations and unknown tools in words for the model', () => {
    const tools = new ToolRegistry().register(echoTool());
    const invalidJson = tools.validate('echo', '{"text": hi}');
    expect(invalidJson.ok).toBe(false);
    expect(!invalidJson.ok && invalidJson.error).toMatch(/^The arguments for echo are not valid JSON \(.+\): "\{\\"text\\": hi\}"\. Send one JSON object\.$/);
    expect(tools.validate('echo', '[1]')).toEqual({ ok: false, error: 'The arguments for echo must be a JSON object, not an array.' });
    expect(tools.validate('echo', '{"times": 0, "extra": true}')).toEqual({
      ok: false,
      error: 'Invalid arguments for echo: missing required property "text"; unknown property "extra"; times must be >= 1.',
    });
    expect(tools.validate('echo', '{"text": 5}')).toEqual({ ok: false, error: 'Invalid arguments for echo: text must be string.' });
    expect(tools.validate('nope', '{}')).toEqual({ ok: false, error: 'There is no tool named "nope". Available tools: echo.' });
  });

  it('treats empty arguments as an empty object', () => {
    const tools = registry();
    expect(tools.validate('current_time', '')).toEqual({ ok: true, input: {} });
  });

  it('holds every built-in, each with its safety flags', () => {
    const flags = Object.fromEntries(
      registry()
        .list()
        .map((tool) => [tool.name, [tool.requiresConfirmation, tool.web, tool.sideEffects]]),
    );
    expect(flags).toEqual({
      current_time: [false, false, false],
      calculator: [false, false, false],
      knowledge_search: [false, false, false],
      http_fetch: [false, true, false],
      web_search: [false, true, false],
      write_file: [true, false, true],
      run_command: [true, false, true],
    });
  });

  it('reports availability: web_search without a key, run_command disabled, knowledge not configured', () => {
    const tools = registry();
    expect(tools.get('web_search')!.availability()).toEqual({ ok: false, reason: 'web_search needs a search API key: set SERVICE_WEB_SEARCH_API_KEY' });
    expect(tools.get('run_command')!.availability()).toEqual({
      ok: false,
      reason: 'run_command is disabled: set tools.run_command.enabled: true in config.yaml',
    });
    expect(tools.get('knowledge_search')!.availability()).toEqual({ ok: false, reason: 'knowledge collections are not configured on this hub' });
    expect(tools.get('http_fetch')!.availability()).toEqual({ ok: true });
    const keyed = registry({ web_search: { api_key: 'key' }, run_command: { enabled: true } });
    expect(keyed.get('web_search')!.availability()).toEqual({ ok: true });
    expect(keyed.get('run_command')!.availability()).toEqual({ ok: true });
  });
});
