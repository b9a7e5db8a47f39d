import type { ChatMessage, ToolSpec } from '../../../src/agent/provider';
import { anthropicRequestBody } from '../../../src/agent/providers/anthropic-request';

const weather: ToolSpec = {
  name: 'get_weather',
  description: 'The weather in a city.',
  parameters: { properties: { city: { type: 'string' } }, required: ['city'] },
};

const conversation: ChatMessage[] = [
  { role: 'system', content: 'Be brief.' },
  { role: 'system', content: 'Answer in English.' },
  { role: 'user', content: 'Weather in Oslo and "Bergen"?' },
  {
    role: 'assistant',
    content: '',
    toolCalls: [
      { id: 'toolu_1', name: 'get_weather', arguments: '{"city":"Oslo"}' },
      { id: 'toolu_2', name: 'get_weather', arguments: 'not json' },
    ],
  },
  { role: 'tool', toolCallId: 'toolu_1', name: 'get_weather', content: 'Rain, 4 °C' },
  { role: 'tool', toolCallId: 'toolu_2', name: 'get_weather', content: 'Error: invalid arguments' },
  { role: 'user', content: 'And tomorrow?\n' },
  { role: 'assistant', content: '' }, // sends nothing: the API refuses empty text blocks
  { role: 'user', content: '' },
  { role: 'assistant', content: 'Sun.' },
];

/** The request as `messages.create` sent it (its body, JSON.stringify'd by the SDK). */
const expected = {
  model: 'claude-test',
  max_tokens: 512,
  messages: [
    { role: 'user', content: [{ type: 'text', text: 'Weather in Oslo and "Bergen"?' }] },
    {
      role: 'assistant',
      content: [
        { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Oslo' } },
        { type: 'tool_use', id: 'toolu_2', name: 'get_weather', input: {} },
      ],
    },
    {
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'toolu_1', content: 'Rain, 4 °C' },
        { type: 'tool_result', tool_use_id: 'toolu_2', content: 'Error: invalid arguments' },
        { type: 'text', text: 'And tomorrow?\n' },
      ],
    },
    { role: 'assistant', content: [{ type: 'text', text: 'Sun.' }] },
  ],
  stream: true,
  system: 'Be brief.\n\nAnswer in English.',
  tools: [
    {
      name: 'get_weather',
      description: 'The weather in a city.',
      input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    },
  ],
};

describe('the Anthropic request body, made as text', () => {
  it('is the JSON messages.create sent: system apart, tool results in the next user message, consecutive user content merged', () => {
    expect(anthropicRequestBody('claude-test', 512, conversation, [weather])).toBe(JSON.stringify(expected));
  });

  it('is the same the next turn, when the same message objects come back with one more (each serialised once)', () => {
    const first = anthropicRequestBody('claude-test', 512, conversation, [weather]);
    const more: ChatMessage[] = [...conversation, { role: 'user', content: 'Thanks' }];
    const next = JSON.parse(anthropicRequestBody('claude-test', 512, more, [weather])) as typeof expected;
    expect(next.messages.slice(0, -1)).toEqual(JSON.parse(first).messages);
    expect(next.messages.at(-1)).toEqual({ role: 'user', content: [{ type: 'text', text: 'Thanks' }] });
  });

  it('leaves out system and tools when there are none', () => {
    expect(JSON.parse(anthropicRequestBody('m', 64, [{ role: 'user', content: 'Hi' }], undefined))).toEqual({
      model: 'm',
      max_tokens: 64,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }],
      stream: true,
    });
  });
});
