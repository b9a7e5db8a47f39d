import { ConfigError, type Config } from '../../config';
import type { LlmProvider } from '../provider';
import { BuiltinProvider } from './builtin';

export { BuiltinProvider } from './builtin';

export const PROVIDER_DEFAULTS = {
  /** Used when `llm.base_url` is null, so the SDKs never pick a base URL from OPENAI_* / ANTHROPIC_* variables. */
  openAiBaseUrl: 'https://api.openai.com/v1',
  anthropicBaseUrl: 'https://api.anthropic.com',
  /**
   * Sent when no key is configured for a self-hosted server (Ollama, llama.cpp, vLLM, LM Studio
   * ignore it): the SDKs refuse to start without one.
   */
  keylessPlaceholder: 'not-needed',
} as const;

/**
 * The model backend `llm.provider` names. A vendor's public API needs SERVICE_LLM_API_KEY; a
 * self-hosted server (`llm.base_url` set) may go without. Throws ConfigError otherwise.
 */
export function createProvider(llm: Readonly<Config['llm']>): LlmProvider {
  if (llm.provider !== 'builtin' && llm.model === 'builtin') {
    throw new ConfigError(`SERVICE_LLM_MODEL: is required for llm.provider "${llm.provider}" (the model name the server knows, e.g. gpt-4o-mini or llama3.1)`);
  }
  switch (llm.provider) {
    case 'builtin':
      return new BuiltinProvider(llm.builtin_token_delay_ms);
    case 'openai': {
      // A vendor's client is loaded only when it is the configured one: both SDKs together would
      // cost every hub's start ~0.45 s (2-core machine).
      const { OpenAiProvider } = require('./openai') as typeof import('./openai');
      return new OpenAiProvider({
        baseUrl: llm.base_url ?? PROVIDER_DEFAULTS.openAiBaseUrl,
        apiKey: apiKey(llm),
        model: llm.model,
        timeoutMs: llm.timeout_s * 1000,
        maxRetries: llm.max_retries,
      });
    }
    case 'anthropic': {
      const { AnthropicProvider } = require('./anthropic') as typeof import('./anthropic');
      return new AnthropicProvider({
        baseUrl: llm.base_url ?? PROVIDER_DEFAULTS.anthropicBaseUrl,
        apiKey: apiKey(llm),
        model: llm.model,
        maxOutputTokens: llm.max_output_tokens,
        timeoutMs: llm.timeout_s * 1000,
        maxRetries: llm.max_retries,
      });
    }
  }
}

function apiKey(llm: Readonly<Config['llm']>): string {
  if (llm.api_key) return llm.api_key;
  if (llm.base_url) return PROVIDER_DEFAULTS.keylessPlaceholder;
  throw new ConfigError(
    `SERVICE_LLM_API_KEY: is required for llm.provider "${llm.provider}" without SERVICE_LLM_BASE_URL (a self-hosted server may go without a key)`,
  );
}
