import { ProviderError, type ProviderChunk } from '../../../src/agent/provider';
import { OpenAiProvider } from '../../../src/agent/providers/openai';
import { FakeOpenAiServer, openAiChunk, openAiTextReply } from '../../fakes/openai-server';
import { closedPort, collect, SECRET_KEY, streamError, textOf, WEATHER_TOOL } from './provider-harness';

let server: FakeOpenAiServer;
let baseUrl: string;

beforeEach(async () => {
  server = new FakeOpenAiServer();
  baseUrl = await server.start();
});
afterEach(() => server.stop());

function provider(overrides: Partial<ConstructorParameters<typeof OpenAiProvider>[0]> = {}): OpenAiProvider {
  return new OpenAiProvider({ baseUrl, apiKey: SECRET_KEY, model: 'fake-model', timeoutMs: 5000, maxRetries: 0, ...overrides });
}

const hello = [{ role: 'user' as const, content: 'Hello?' }];

describe('OpenAI-compatible provider against a fake server (real openai SDK)', () => {
  it('streams text deltas in order, then the usage, and sends a streaming request with usage', async () => {
    server.enqueue(openAiTextReply(['Hel', 'lo', ' there'], { prompt: 7, completion: 3 }));
    const chunks = await collect(provider(), { messages: [{ role: 'system', content: 'Be brief.' }, ...hello] });
    expect(chunks).toEqual([
      { type: 'text', text: 'Hel' },
      { type: 'text', text: 'lo' },
      { type: 'text', text: ' there' },
      { type: 'usage', inputTokens: 7, outputTokens: 3 },
    ]);
    const [request] = server.requests;
    expect(request.method).toBe('POST');
    expect(request.headers.authorization).toBe(`Bearer ${SECRET_KEY}`);
    expect(request.body).toMatchObject({
      model: 'fake-model',
      stream: true,
      stream_options: { include_usage: true },
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hello?' },
      ],
    });
    // No tools offered: no `tools` key at all (some servers refuse an empty list).
    expect(request.body).not.toHaveProperty('tools');
  });

  it('reads every text as sent when most chunks are read without parsing them (escapes, a changed chunk, a tool call between)', async () => {
    const texts = ['Hel', 'lo "you"', ' \\ back', '\n', 'é 你好 🎉', '', '"},"x":"'];
    const raw = (text: string, created: number) =>
      `{"id":"chatcmpl-t","object":"chat.completion.chunk","created":${created},"model":"m","choices":[{"index":0,"delta":{"content":${JSON.stringify(text)}},"finish_reason":null}]}`;
    server.enqueue({
      kind: 'stream',
      events: [
        openAiChunk.delta({ role: 'assistant', content: '' }),
        ...texts.map((text) => ({ data: raw(text, 1) })),
        { data: raw('x', 1).replace('"x"', '"\\u00e9\\/"') }, // escapes JSON.stringify would not use
        { data: raw('next second', 2) },
        { data: raw('again', 2) },
        openAiChunk.toolCall({ index: 0, id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{}' } }),
        { data: raw('after the call', 2) },
        openAiChunk.finish('tool_calls'),
        openAiChunk.usage(3, 4),
        openAiChunk.done(),
      ],
    });
    const chunks = await collect(provider(), { messages: hello });
    expect(chunks).toEqual([
      ...texts.filter((text) => text !== '').map((text) => ({ type: 'text', text })),
      { type: 'text', text: 'é/' },
      { type: 'text', text: 'next second' },
      { type: 'text', text: 'again' },
      { type: 'text', text: 'after the call' },
      { type: 'tool_call', call: { id: 'call_1', name: 'get_weather', arguments: '{}' } },
      { type: 'usage', inputTokens: 3, outputTokens: 4 },
    ]);
  });

  it('sends tools as function tools and assembles one call streamed in fragments', async () => {
    server.enqueue({
      kind: 'stream',
      events: [
        openAiChunk.toolCall({ index: 0, id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '' } }),
        openAiChunk.toolCall({ index: 0, function: { arguments: '{"ci' } }),
        openAiChunk.toolCall({ index: 0, function: { arguments: 'ty": "Oslo"}' } }),
        openAiChunk.finish('tool_calls'),
        openAiChunk.usage(30, 9),
        openAiChunk.done(),
      ],
    });
    const chunks = await collect(provider(), { messages: hello, tools: [WEATHER_TOOL] });
    expect(chunks).toEqual([
      { type: 'tool_call', call: { id: 'call_a', name: 'get_weather', arguments: '{"city": "Oslo"}' } },
      { type: 'usage', inputTokens: 30, outputTokens: 9 },
    ]);
    expect(server.requests[0].body.tools).toEqual([{ type: 'function', function: WEATHER_TOOL }]);
  });

  it('assembles parallel tool calls whose fragments interleave, in index order', async () => {
    server.enqueue({
      kind: 'stream',
      events: [
        openAiChunk.delta({ content: 'Checking both.' }),
        openAiChunk.toolCall({ index: 0, id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":' } }),
        openAiChunk.toolCall({ index: 1, id: 'call_2', type: 'function', function: { name: 'get_weather', arguments: '{"city":' } }),
        openAiChunk.toolCall({ index: 1, function: { arguments: '"Rome"}' } }),
        openAiChunk.toolCall({ index: 0, function: { arguments: '"Lima"}' } }),
        openAiChunk.finish('tool_calls'),
        openAiChunk.done(),
      ],
    });
    const chunks = await collect(provider(), { messages: hello, tools: [WEATHER_TOOL] });
    expect(chunks).toEqual([
      { type: 'text', text: 'Checking both.' },
      { type: 'tool_call', call: { id: 'call_1', name: 'get_weather', arguments: '{"city":"Lima"}' } },
      { type: 'tool_call', call: { id: 'call_2', name: 'get_weather', arguments: '{"city":"Rome"}' } },
    ]);
  });

  it('passes invalid JSON arguments through raw (the runner reports them to the model)', async () => {
    server.enqueue({
      kind: 'stream',
      events: [
        openAiChunk.toolCall({ index: 0, id: 'call_x', type: 'function', function: { name: 'get_weather', arguments: '{"city": Oslo' } }),
        openAiChunk.finish('tool_calls'),
        openAiChunk.done(),
      ],
    });
    const chunks = await collect(provider(), { messages: hello, tools: [WEATHER_TOOL] });
    expect(chunks).toEqual([{ type: 'tool_call', call: { id: 'call_x', name: 'get_weather', arguments: '{"city": Oslo' } }]);
  });

  it('emits calls at the end of the stream when the server never sends a finish_reason', async () => {
    server.enqueue({
      kind: 'stream',
      events: [openAiChunk.toolCall({ index: 0, id: 'call_y', function: { name: 'get_weather', arguments: '{}' } }), openAiChunk.done()],
    });
    const chunks = await collect(provider(), { messages: hello, tools: [WEATHER_TOOL] });
    expect(chunks).toEqual([{ type: 'tool_call', call: { id: 'call_y', name: 'get_weather', arguments: '{}' } }]);
  });

  it('sends assistant tool calls and tool results in the chat-completions shape', async () => {
    server.enqueue(openAiTextReply(['Sunny.']));
    await collect(provider(), {
      messages: [
        ...hello,
        { role: 'assistant', content: '', toolCalls: [{ id: 'call_1', name: 'get_weather', arguments: '{"city":"Oslo"}' }] },
        { role: 'tool', toolCallId: 'call_1', name: 'get_weather', content: '{"sky":"clear"}' },
      ],
      tools: [WEATHER_TOOL],
    });
    expect(server.requests[0].body.messages).toEqual([
      { role: 'user', content: 'Hello?' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } }] },
      { role: 'tool', tool_call_id: 'call_1', content: '{"sky":"clear"}' },
    ]);
  });

  it('sends a conversation reused across turns whole each time (each message serialised once, its JSON kept with it)', async () => {
    server.enqueue(openAiTextReply(['One.']));
    server.enqueue(openAiTextReply(['Two.']));
    const first = [{ role: 'system' as const, content: 'Be brief.' }, ...hello];
    const client = provider();
    await collect(client, { messages: first, tools: [WEATHER_TOOL] });
    // The next turn: the same message objects, then the reply and a new question.
    const second = [...first, { role: 'assistant' as const, content: 'One.' }, { role: 'user' as const, content: 'And "then"?\n' }];
    await collect(client, { messages: second, tools: [WEATHER_TOOL] });
    expect(server.requests.map((request) => request.headers['content-type'])).toEqual(['application/json', 'application/json']);
    expect(server.requests[1].body).toEqual({
      model: 'fake-model',
      stream: true,
      stream_options: { include_usage: true },
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hello?' },
        { role: 'assistant', content: 'One.' },
        { role: 'user', content: 'And "then"?\n' },
      ],
      tools: [{ type: 'function', function: WEATHER_TOOL }],
    });
  });

  it('reports a closed port as unreachable, quickly, even with a retry', async () => {
    const port = await closedPort();
    const started = Date.now();
    const error = await streamError(provider({ baseUrl: `http://127.0.0.1:${port}/v1`, maxRetries: 1 }), { messages: hello });
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as ProviderError).kind).toBe('unreachable');
    expect(error.message).toBe('The OpenAI-compatible model server could not be reached.');
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it.each([
    [401, /HTTP 401 \(check SERVICE_LLM_API_KEY\)/],
    [500, /HTTP 500\./],
    [404, /HTTP 404 \(check SERVICE_LLM_MODEL/],
  ])('reports HTTP %i as failed, without the key or the upstream body', async (status, expected) => {
    server.enqueue({ kind: 'error', status, body: { error: { message: `upstream detail mentioning ${SECRET_KEY}`, type: 'x' } } });
    const error = await streamError(provider(), { messages: hello });
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as ProviderError).kind).toBe('failed');
    expect(error.message).toMatch(expected);
    expect(error.message).not.toContain('upstream detail');
    expect(error.message).not.toContain(SECRET_KEY);
  });

  it('reports a malformed stream as failed', async () => {
    server.enqueue({ kind: 'stream', events: [openAiChunk.text('Hi'), { data: '{"id": "chatcmpl-1", "choices": [' }] });
    const chunks: ProviderChunk[] = [];
    let failure: unknown;
    try {
      for await (const chunk of provider().stream({ messages: hello, signal: new AbortController().signal })) chunks.push(chunk);
    } catch (error) {
      failure = error;
    }
    expect(textOf(chunks)).toBe('Hi');
    expect(failure).toBeInstanceOf(ProviderError);
    expect((failure as ProviderError).kind).toBe('failed');
    expect((failure as Error).message).toBe('The OpenAI-compatible model server sent a malformed stream.');
  });

  it('reports an error event inside the stream as failed', async () => {
    server.enqueue({ kind: 'stream', events: [{ data: { error: { message: 'model overloaded', type: 'server_error' } } }] });
    const error = await streamError(provider(), { messages: hello });
    expect((error as ProviderError).kind).toBe('failed');
    expect(error.message).not.toContain('overloaded');
  });

  it('reports a stream with no chunks at all as failed', async () => {
    server.enqueue({ kind: 'stream', events: [openAiChunk.done()] });
    const error = await streamError(provider(), { messages: hello });
    expect((error as ProviderError).kind).toBe('failed');
    expect(error.message).toMatch(/empty stream/);
  });

  it('gives up on a stream that goes silent, as unreachable, after the timeout', async () => {
    server.enqueue({ kind: 'stream', events: [openAiChunk.text('Hel')], hang: true });
    const started = Date.now();
    const error = await streamError(provider({ timeoutMs: 300 }), { messages: hello });
    expect((error as ProviderError).kind).toBe('unreachable');
    expect(error.message).toMatch(/did not answer within/);
    expect(Date.now() - started).toBeLessThan(3000);
    expect(await server.hungUp(0)).toBe(true);
  });

  it('does not count the consumer’s own pauses as server silence', async () => {
    server.enqueue(openAiTextReply(['a', 'b']));
    const chunks: ProviderChunk[] = [];
    for await (const chunk of provider({ timeoutMs: 200 }).stream({ messages: hello, signal: new AbortController().signal })) {
      chunks.push(chunk);
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
    expect(textOf(chunks)).toBe('ab');
  });

  it('stops at once when aborted mid-stream, and hangs up on the server', async () => {
    server.enqueue({ kind: 'stream', events: [openAiChunk.text('first'), openAiChunk.text('second'), openAiChunk.text('third')], delayMs: 1000 });
    const controller = new AbortController();
    const chunks: ProviderChunk[] = [];
    const started = Date.now();
    for await (const chunk of provider().stream({ messages: hello, signal: controller.signal })) {
      chunks.push(chunk);
      controller.abort();
    }
    expect(chunks).toEqual([{ type: 'text', text: 'first' }]);
    // Returned before the server's next chunk was even due (1 s after the first).
    expect(Date.now() - started).toBeLessThan(1000);
    expect(await server.hungUp(0)).toBe(true);
    expect(server.requests).toHaveLength(1);
  });

  it('keeps one connection alive for consecutive answers', async () => {
    server.enqueue(openAiTextReply(['One.']), openAiTextReply(['Two.']));
    const model = provider();
    expect(textOf(await collect(model, { messages: hello }))).toBe('One.');
    expect(textOf(await collect(model, { messages: hello }))).toBe('Two.');
    expect(server.connections).toBe(1);
  });

  it('retries a 5xx through the SDK, then streams the answer', async () => {
    server.enqueue({ kind: 'error', status: 503, body: { error: { message: 'busy' } } }, openAiTextReply(['Back.']));
    const chunks = await collect(provider({ maxRetries: 1 }), { messages: hello });
    expect(textOf(chunks)).toBe('Back.');
    expect(server.requests).toHaveLength(2);
  });

  it('streamReads gives the chunks of stream grouped by read: an answer written at once comes in a few batches', async () => {
    const pieces = Array.from({ length: 50 }, (_, index) => `w${index} `);
    server.enqueue(openAiTextReply(pieces), openAiTextReply(pieces));
    const model = provider();
    const batches: ProviderChunk[][] = [];
    for await (const batch of model.streamReads({ messages: hello, signal: new AbortController().signal })) batches.push(batch);
    expect(batches.flat()).toEqual(await collect(model, { messages: hello }));
    expect(textOf(batches.flat())).toBe(pieces.join(''));
    // The fake wrote 54 events in one go: far fewer reads than events.
    expect(batches.length).toBeLessThan(10);
  });

  it('sends nothing when the signal is already aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    const chunks = await collect(provider(), { messages: hello, signal: controller.signal });
    expect(chunks).toEqual([]);
    expect(server.requests).toHaveLength(0);
  });
});
