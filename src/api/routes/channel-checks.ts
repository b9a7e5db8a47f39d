import { z } from 'zod';
import type { ChannelAdapter, ChannelDescriptor, ConnectionCheck } from '../../core/channel';
import { AppError } from '../../core/errors';
import type { ApiModule } from '../app';

/** What the channel routes need of the hub: its registry, the adapters built in this process, its public URL. */
export interface ChannelChecksOptions {
  descriptors: readonly Pick<ChannelDescriptor<unknown>, 'name' | 'config'>[];
  /** The adapters built in this process, by channel name (a channel that is off has none). */
  adapters: () => ReadonlyMap<string, ChannelAdapter>;
  publicUrl: string | null;
}

const checkSchema = z
  .object({
    channel: z.string(),
    enabled: z.boolean(),
    ok: z.boolean(),
    detail: z.string().describe("What the platform said (the bot's name, or its refusal); never a token."),
    variable: z.string().nullable().describe('The environment variable to fix when ok is false; null when none is to blame.'),
  })
  .meta({ id: 'ChannelConnectionCheck' });

/**
 * `POST /admin/channels/{name}/test` (does the platform accept our credentials?) and
 * `POST /admin/channels/{name}/webhook` (register the webhook at the public URL: Telegram's setWebhook).
 */
export function channelCheckRoutes(options: ChannelChecksOptions): ApiModule {
  const names = options.descriptors.map((descriptor) => descriptor.name) as [string, ...string[]];
  const params = z.object({ name: z.enum(names) });
  const tokenVariable = (name: string) =>
    options.descriptors.find((descriptor) => descriptor.name === name)?.config?.env.find((binding) => binding.secret)?.env ?? null;
  return (api) => {
    api.add({
      method: 'post',
      path: '/admin/channels/{name}/test',
      summary: "Test a channel's connection: does its platform accept the configured credentials?",
      description:
        'Slack: auth.test with the bot token; Telegram: getMe. A refusal names the environment variable to fix. Channels without platform credentials (web, webchat) answer ok.',
      tags: ['admin'],
      access: 'admin',
      params,
      response: { status: 200, description: 'What the check found (a refusal is a 200 with ok false).', data: checkSchema },
      handler: async ({ params: { name } }) => {
        const adapter = options.adapters().get(name);
        if (!adapter) {
          const variable = tokenVariable(name);
          return { channel: name, enabled: false, ok: false, detail: `${name} is off${variable ? `: set ${variable} to turn it on` : ''}.`, variable };
        }
        const check: ConnectionCheck = adapter.checkConnection
          ? await adapter.checkConnection()
          : { ok: true, detail: `${name} has no platform credentials to check: it is served by the hub itself.`, variable: null };
        return { channel: name, enabled: true, ...check };
      },
    });

    api.add({
      method: 'post',
      path: '/admin/channels/{name}/webhook',
      summary: 'Register the channel’s webhook with its platform at the hub’s public URL (Telegram: setWebhook)',
      description:
        'Telegram in webhook mode registers `<public_url>/api/v1/channels/telegram/webhook` with the webhook secret; the hub also does it on every start when `server.public_url` is set.',
      tags: ['admin'],
      access: 'admin',
      params,
      errors: ['CONFLICT'],
      response: { status: 200, description: 'The URL the platform now delivers to.', data: z.object({ channel: z.string(), url: z.string() }) },
      handler: async ({ params: { name } }) => {
        const adapter = options.adapters().get(name);
        if (!adapter) throw new AppError('CONFLICT', `${name} is off${tokenVariable(name) ? `: set ${tokenVariable(name)} to turn it on` : ''}.`);
        if (!adapter.registerWebhook) throw new AppError('CONFLICT', `${name} has no webhook to register.`);
        if (!options.publicUrl)
          throw new AppError('CONFLICT', 'The hub has no public URL: set SERVICE_PUBLIC_URL (server.public_url) to the address the platform can reach.');
        try {
          return { channel: name, ...(await adapter.registerWebhook(options.publicUrl)) };
        } catch (error) {
          throw new AppError('CONFLICT', error instanceof Error ? error.message : String(error));
        }
      },
    });
  };
}
