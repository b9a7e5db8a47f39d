import { ConfigError, configSchema } from '../../../src/config';
import { BuiltinProvider, createProvider } from '../../../src/agent/providers';
import { AnthropicProvider } from '../../../src/agent/providers/anthropic';
import { OpenAiProvider } from '../../../src/agent/providers/openai';
import { FakeOpenAiServer, openAiTextReply } from '../../fakes/openai-server';
import { collect, textOf } from './provider-harness';

function llm(overrides: Record<string, unknown>) {
  return configSchema.shape.llm.parse(overrides);
}

describe('createProvider', () => {
  it('builds the provider llm.provider names', () => {
    expect(createProvider(llm({}))).toBeInstanceOf(BuiltinProvider);
    const openai = createProvider(llm({ provider: 'openai', model: 'gpt-4o-mini', api_key: 'sk-x' }));
    expect(openai).toBeInstanceOf(OpenAiProvider);
    expect([openai.name, openai.model]).toEqual(['openai', 'gpt-4o-mini']);
    expect(createProvider(llm({ provider: 'anthropic', model: 'claude-x', api_key: 'k' }))).toBeInstanceOf(AnthropicProvider);
  });

  it('refuses a vendor API without a key and a real provider without a model, naming the variable and not the key', () => {
    expect(() => createProvider(llm({ provider: 'openai', model: 'gpt-4o-mini' }))).toThrow(ConfigError);
    expect(() => createProvider(llm({ provider: 'anthropic', model: 'claude-x' }))).toThrow(/^SERVICE_LLM_API_KEY: is required/);
    expect(() => createProvider(llm({ provider: 'openai', api_key: 'sk-secret' }))).toThrow(/^SERVICE_LLM_MODEL: is required/);
    expect(() => createProvider(llm({ provider: 'openai', api_key: 'sk-secret' }))).not.toThrow(/sk-secret/);
  });

  it('talks to a keyless self-hosted server (Ollama style) at llm.base_url', async () => {
    const server = new FakeOpenAiServer();
    const baseUrl = await server.start();
    try {
      server.enqueue(openAiTextReply(['local', ' model']));
      const provider = createProvider(llm({ provider: 'openai', model: 'llama3.1', base_url: baseUrl }));
      expect(textOf(await collect(provider, { messages: [{ role: 'user', content: 'hi' }] }))).toBe('local model');
      expect(server.requests[0].body.model).toBe('llama3.1');
    } finally {
      await server.stop();
    }
  });
});
