import { ProviderError, type ProviderChunk } from '../../../src/agent/provider';
import { AnthropicProvider } from '../../../src/agent/providers/anthropic';
import { anthropicEvent as event, anthropicTextReply, FakeAnthropicServer } from '../../fakes/anthropic-server';
import { closedPort, collect, SECRET_KEY, streamError, WEATHER_TOOL } from './provider-harness';

let server: FakeAnthropicServer;
let baseUrl: string;

beforeEach(async () => {
  server = new FakeAnthropicServer();
  baseUrl = await server.start();
});
afterEach(() => server.stop());

function provider(overrides: Partial<ConstructorParameters<typeof AnthropicProvider>[0]> = {}): AnthropicProvider {
  return new AnthropicProvider({ baseUrl, apiKey: SECRET_KEY, model: 'fake-claude', maxOutputTokens: 512, timeoutMs: 5000, maxRetries: 0, ...overrides });
}

const hello = [{ role: 'user' as const, content: 'Hello?' }];

describe('Anthropic provider against a fake server (real @anthropic-ai/sdk)', () => {
  it('streams text deltas, then usage from message_start and message_delta; the system prompt goes apart', async () => {
    server.enqueue(anthropicTextReply(['Hi', ' you'], { input: 42, output: 5 }));
    const chunks = await collect(provider(), { messages: [{ role: 'system', content: 'Be brief.' }, ...hello] });
    expect(chunks).toEqual([
      { type: 'text', text: 'Hi' },
      { type: 'text', text: ' you' },
      { type: 'usage', inputTokens: 42, outputTokens: 5 },
    ]);
    const [request] = server.requests;
    // SDK 1.x sends the key as a bearer token (older ones used x-api-key).
    expect([request.headers['x-api-key'], request.headers.authorization]).toContain(`Bearer ${SECRET_KEY}`);
    expect(request.body).toEqual({
      model: 'fake-claude',
      max_tokens: 512,
      stream: true,
      system: 'Be brief.',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Hello?' }] }],
    });
  });

  it('reads every text delta as sent when most are read without parsing them (escapes, another block, tool input between)', async () => {
    const texts = ['Hi', ' "quoted"', ' \\ ', '\n', 'é 你好 🎉', '"},"x":"'];
    server.enqueue({
      kind: 'stream',
      events: [
        event.messageStart(5),
        event.textStart(0),
        ...texts.map((text) => event.textDelta(0, text)),
        { event: 'content_block_delta', data: '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"\\u00e9\\/"}}' },
        event.blockStop(0),
        event.toolStart(1, 'toolu_1', 'get_weather'),
        event.inputJson(1, '{"city":'),
        event.inputJson(1, '"Oslo"}'),
        event.blockStop(1),
        event.textStart(2),
        event.textDelta(2, 'after'),
        event.textDelta(2, ' the call'),
        event.blockStop(2),
        event.messageDelta('tool_use', 9),
        event.messageStop(),
      ],
    });
    const chunks = await collect(provider(), { messages: hello });
    expect(chunks).toEqual([
      ...texts.map((text) => ({ type: 'text', text })),
      { type: 'text', text: 'é/' },
      { type: 'tool_call', call: { id: 'toolu_1', name: 'get_weather', arguments: '{"city":"Oslo"}' } },
      { type: 'text', text: 'after' },
      { type: 'text', text: ' the call' },
      { type: 'usage', inputTokens: 5, outputTokens: 9 },
    ]);
  });

  it('sends tools with input_schema and assembles a tool_use from input_json_delta fragments', async () => {
    server.enqueue({
      kind: 'stream',
      events: [
        event.messageStart(50),
        event.textStart(0),
        event.textDelta(0, 'Let me look.'),
        event.blockStop(0),
        event.toolStart(1, 'toolu_1', 'get_weather'),
        event.inputJson(1, ''),
        event.inputJson(1, '{"city": '),
        event.inputJson(1, '"Oslo"}'),
        event.blockStop(1),
        event.messageDelta('tool_use', 17),
        event.messageStop(),
      ],
    });
    const chunks = await collect(provider(), { messages: hello, tools: [WEATHER_TOOL] });
    expect(chunks).toEqual([
      { type: 'text', text: 'Let me look.' },
      { type: 'tool_call', call: { id: 'toolu_1', name: 'get_weather', arguments: '{"city": "Oslo"}' } },
      { type: 'usage', inputTokens: 50, outputTokens: 17 },
    ]);
    expect(server.requests[0].body.tools).toEqual([{ name: 'get_weather', description: WEATHER_TOOL.description, input_schema: WEATHER_TOOL.parameters }]);
  });

  it('emits parallel tool_use blocks each complete, and a call without arguments as {}', async () => {
    server.enqueue({
      kind: 'stream',
      events: [
        event.messageStart(10),
        event.toolStart(0, 'toolu_a', 'get_weather'),
        event.inputJson(0, '{"city":"Lima"}'),
        event.blockStop(0),
        event.toolStart(1, 'toolu_b', 'current_time'),
        event.blockStop(1),
        event.messageDelta('tool_use', 30),
        event.messageStop(),
      ],
    });
    const chunks = await collect(provider(), { messages: hello, tools: [WEATHER_TOOL] });
    expect(chunks.filter((chunk) => chunk.type === 'tool_call')).toEqual([
      { type: 'tool_call', call: { id: 'toolu_a', name: 'get_weather', arguments: '{"city":"Lima"}' } },
      { type: 'tool_call', call: { id: 'toolu_b', name: 'current_time', arguments: '{}' } },
    ]);
  });

  it('passes invalid JSON tool input through raw', async () => {
    server.enqueue({
      kind: 'stream',
      events: [
        event.messageStart(10),
        event.toolStart(0, 'toolu_x', 'get_weather'),
        event.inputJson(0, '{"city": Os'),
        event.blockStop(0),
        event.messageDelta('tool_use', 3),
        event.messageStop(),
      ],
    });
    const chunks = await collect(provider(), { messages: hello, tools: [WEATHER_TOOL] });
    expect(chunks[0]).toEqual({ type: 'tool_call', call: { id: 'toolu_x', name: 'get_weather', arguments: '{"city": Os' } });
  });

  it('sends assistant tool calls as tool_use blocks and tool results as tool_result blocks of one user message', async () => {
    server.enqueue(anthropicTextReply(['Done.']));
    await collect(provider(), {
      messages: [
        ...hello,
        {
          role: 'assistant',
          content: 'Checking.',
          toolCalls: [
            { id: 'toolu_a', name: 'get_weather', arguments: '{"city":"Lima"}' },
            { id: 'toolu_b', name: 'get_weather', arguments: 'not json' },
          ],
        },
        { role: 'tool', toolCallId: 'toolu_a', name: 'get_weather', content: '{"sky":"grey"}' },
        { role: 'tool', toolCallId: 'toolu_b', name: 'get_weather', content: 'error: arguments are not valid JSON' },
      ],
    });
    expect(server.requests[0].body.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Hello?' }] },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Checking.' },
          { type: 'tool_use', id: 'toolu_a', name: 'get_weather', input: { city: 'Lima' } },
          { type: 'tool_use', id: 'toolu_b', name: 'get_weather', input: {} },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_a', content: '{"sky":"grey"}' },
          { type: 'tool_result', tool_use_id: 'toolu_b', content: 'error: arguments are not valid JSON' },
        ],
      },
    ]);
  });

  it('reports a closed port as unreachable, quickly', async () => {
    const port = await closedPort();
    const started = Date.now();
    const error = await streamError(provider({ baseUrl: `http://127.0.0.1:${port}`, maxRetries: 1 }), { messages: hello });
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as ProviderError).kind).toBe('unreachable');
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it.each([401, 500])('reports HTTP %i as failed, without the key or the upstream body', async (status) => {
    server.enqueue({ kind: 'error', status, body: { type: 'error', error: { type: 'api_error', message: `upstream says ${SECRET_KEY}` } } });
    const error = await streamError(provider(), { messages: hello });
    expect((error as ProviderError).kind).toBe('failed');
    expect(error.message).toContain(`HTTP ${status}`);
    expect(error.message).not.toContain('upstream says');
    expect(error.message).not.toContain(SECRET_KEY);
  });

  it('reports a malformed stream as failed', async () => {
    server.enqueue({ kind: 'stream', events: [event.messageStart(1), { event: 'content_block_delta', data: '{"type": "content_block_delta", "index": 0, ' }] });
    const error = await streamError(provider(), { messages: hello });
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as ProviderError).kind).toBe('failed');
  });

  it('reports a stream that ends before message_stop as failed', async () => {
    server.enqueue({ kind: 'stream', events: [event.messageStart(1), event.textStart(0), event.textDelta(0, 'half')] });
    const error = await streamError(provider(), { messages: hello });
    expect((error as ProviderError).kind).toBe('failed');
    expect(error.message).toMatch(/ended before the message was complete/);
  });

  it('reports an error event in the stream as failed', async () => {
    server.enqueue({
      kind: 'stream',
      events: [event.messageStart(1), { event: 'error', data: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } } }],
    });
    const error = await streamError(provider(), { messages: hello });
    expect((error as ProviderError).kind).toBe('failed');
    expect(error.message).not.toContain('Overloaded');
  });

  it('gives up on a silent stream as unreachable after the timeout', async () => {
    server.enqueue({ kind: 'stream', events: [event.messageStart(1)], hang: true });
    const started = Date.now();
    const error = await streamError(provider({ timeoutMs: 300 }), { messages: hello });
    expect((error as ProviderError).kind).toBe('unreachable');
    expect(Date.now() - started).toBeLessThan(3000);
    expect(await server.hungUp(0)).toBe(true);
  });

  it('stops at once when aborted mid-stream, and hangs up on the server', async () => {
    server.enqueue({
      kind: 'stream',
      events: [event.messageStart(1), event.textStart(0), event.textDelta(0, 'first'), event.textDelta(0, 'second')],
      delayMs: 300,
    });
    const controller = new AbortController();
    const chunks: ProviderChunk[] = [];
    for await (const chunk of provider().stream({ messages: hello, signal: controller.signal })) {
      chunks.push(chunk);
      controller.abort();
    }
    expect(chunks).toEqual([{ type: 'text', text: 'first' }]);
    expect(await server.hungUp(0)).toBe(true);
  });
});
