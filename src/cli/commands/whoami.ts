import type { Command } from 'commander';
import { connect, type CliContext } from '../context';
import type { UserView } from '../../protocol/payloads';
import { sanitize } from '../terminal/text';
import { jsonOption, withHubOptions, type HubOptions } from './hub-options';

/** What `GET /config` tells a client (decisions.md §7), on hubs that have it. */
interface HubConfig {
  provider?: unknown;
  model?: unknown;
  llm?: { provider?: unknown; model?: unknown };
}

/** `openai fake-model`, from the top level or an `llm` section, whichever the hub answers. */
function modelOf(config: HubConfig | null): string | null {
  const provider = config?.provider ?? config?.llm?.provider;
  const model = config?.model ?? config?.llm?.model;
  if (typeof provider !== 'string') return null;
  return sanitize(typeof model === 'string' ? `${provider} ${model}` : provider);
}

/** `switchboard whoami`: the account, the hub and how the CLI authenticates (never the secret). */
export function registerWhoami(program: Command, context: CliContext): void {
  withHubOptions(program.command('whoami'))
    .description("show who you are on the hub, how the CLI authenticates (never the secret), and the hub's version and model")
    .addOption(jsonOption())
    .action(async (options: HubOptions & { json?: boolean }) => {
      const client = connect(context, options);
      const user = await client.get<UserView>('/auth/me');
      const health = await client.get<{ version: string }>('/health');
      const config = await client.getOptional<HubConfig>('/config');
      if (options.json) {
        return context.out(JSON.stringify({ hub: client.hubUrl, version: health.version, via: client.credentialKind, user, config }, null, 2));
      }
      context.out(
        `${context.colors.bold(sanitize(user.username))} (${user.role}) · ${sanitize(user.email)}${user.is_active ? '' : context.colors.red(' · inactive')}`,
      );
      context.out(`${context.colors.dim('hub  ')} ${client.hubUrl} (Switchboard ${sanitize(health.version)})`);
      context.out(`${context.colors.dim('via  ')} ${client.describeCredential()}`);
      const model = modelOf(config);
      if (model) context.out(`${context.colors.dim('model')} ${model}`);
    });
}
