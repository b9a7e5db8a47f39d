import { z } from 'zod';
import { MEMORY_MODES } from '../../agent/memory';
import { TURN_MODES } from '../../core/events';
import type { ApiModule } from '../app';

/** The non-secret runtime facts a client needs (decisions.md §7): never a key, token or URL with credentials. */
export interface RuntimeFacts {
  provider: string;
  model: string;
  contextWindow: number;
  /** Chat channels enabled on this hub (the web channel always is). */
  channels(): string[];
}

const configSchema = z
  .object({
    provider: z.string().describe('`builtin`, `openai` or `anthropic`.'),
    model: z.string(),
    context_window: z.number().int().describe('Tokens the model reads; the conversation gets this minus the working-memory budget.'),
    delegate_enabled: z.boolean().describe('Whether `mode: delegate` is offered (always, here: sub-tasks run on the same model).'),
    modes: z.array(z.enum(TURN_MODES)),
    memory_modes: z.array(z.enum(MEMORY_MODES)),
    channels: z.array(z.string()).describe('Enabled channels: `web` always, the chat channels (`slack`, `telegram`, …) when configured.'),
  })
  .meta({ id: 'RuntimeConfig' });

const modelSchema = z
  .object({
    alias: z.string().describe('The name a session config may use as `model`.'),
    provider: z.string(),
    model_name: z.string(),
    is_active: z.boolean(),
  })
  .meta({ id: 'ModelEntry' });

/** `GET /config`, `GET /config/models`: what a client shows and offers (any signed-in user). */
export function configRoutes(facts: RuntimeFacts): ApiModule {
  return (api) => {
    api.add({
      method: 'get',
      path: '/config',
      summary: 'Runtime facts a client needs: provider and model, context window, modes, enabled channels (no secrets)',
      tags: ['config'],
      access: 'user',
      response: { status: 200, description: 'The facts.', data: configSchema },
      handler: () => ({
        provider: facts.provider,
        model: facts.model,
        context_window: facts.contextWindow,
        delegate_enabled: true,
        modes: [...TURN_MODES],
        memory_modes: [...MEMORY_MODES],
        channels: facts.channels(),
      }),
    });

    api.add({
      method: 'get',
      path: '/config/models',
      summary: 'The configured models (a plain array); one is active. A hub has one model today',
      tags: ['config'],
      access: 'user',
      response: { status: 200, description: 'The models.', data: z.array(modelSchema) },
      handler: () => [{ alias: facts.model, provider: facts.provider, model_name: facts.model, is_active: true }],
    });
  };
}
