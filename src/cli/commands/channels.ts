import type { Command } from 'commander';
import { connect, type CliContext } from '../context';
import { EXIT, type ExitCode } from '../exit-codes';
import { withHubOptions, type HubOptions } from './hub-options';

interface ConnectionCheck {
  channel: string;
  enabled: boolean;
  ok: boolean;
  detail: string;
  variable: string | null;
}

/**
 * `switchboard channels test <name>` (does the platform accept the hub's credentials? which
 * variable to fix if not) and `switchboard channels telegram set-webhook` (register Telegram's
 * webhook at the hub's public URL). Both need an admin login or an admin's API key.
 */
export function registerChannels(program: Command, context: CliContext, setExitCode: (code: ExitCode) => void): void {
  const channels = program.command('channels').description("check the hub's chat channels and register their webhooks");

  withHubOptions(channels.command('test'))
    .description("ask the channel's platform whether it accepts the hub's credentials (exit 1 if not)")
    .argument('<name>', 'the channel: slack, telegram, web, webchat')
    .action(async (name: string, options: HubOptions) => {
      const check = await connect(context, options).post<ConnectionCheck>(`/admin/channels/${encodeURIComponent(name)}/test`);
      if (check.ok) {
        context.out(`✓ ${check.channel}: ${check.detail}`);
        return setExitCode(EXIT.OK);
      }
      context.err(`✗ ${check.channel}: ${check.detail}${check.variable ? ` Check ${check.variable} in the hub's environment, then restart it.` : ''}`);
      setExitCode(EXIT.REFUSED);
    });

  const telegram = channels.command('telegram').description('Telegram-only actions');
  withHubOptions(telegram.command('set-webhook'))
    .description("register the hub's webhook with Telegram (setWebhook at <public_url>/api/v1/channels/telegram/webhook, with the secret)")
    .action(async (options: HubOptions) => {
      const answer = await connect(context, options).post<{ url: string }>('/admin/channels/telegram/webhook');
      context.out(`Telegram now delivers updates to ${answer.url}.`);
    });
}
