import type { Command } from 'commander';
import type { HubClient } from '../api-client';
import { connect, type CliContext } from '../context';
import { CliError } from '../exit-codes';
import { formatTable } from '../terminal/table';
import { formatTime, sanitize } from '../terminal/text';
import { jsonOption, withHubOptions, type HubOptions } from './hub-options';

interface Identity {
  channel: string;
  platform_user_id: string;
  user_id: string;
  created_at: string;
}

const CHANNELS = ['slack', 'telegram', 'mattermost'];

/**
 * `switchboard identities list | link | unlink` (admins): chat platform users bound to hub users,
 * so their clicks on approval buttons count as that hub user's (issue 30).
 */
export function registerIdentities(program: Command, context: CliContext): void {
  const identities = program
    .command('identities')
    .description("bind chat platform users (Slack, Telegram, Mattermost) to hub users: their approval clicks count as that user's (admins)");

  withHubOptions(identities.command('list'))
    .description("a hub user's bound platform users")
    .argument('<username>', 'the hub user')
    .addOption(jsonOption())
    .action(async (username: string, options: HubOptions & { json?: boolean }) => {
      const client = connect(context, options);
      const user = await userNamed(client, username);
      const items = await client.get<Identity[]>(`/users/${user.id}/identities`);
      if (options.json) return context.out(JSON.stringify(items, null, 2));
      if (items.length === 0) return context.out(`No platform users are bound to ${sanitize(user.username)}.`);
      const rows = items.map((item) => [`${item.channel}:${sanitize(item.platform_user_id)}`, formatTime(item.created_at)]);
      for (const line of formatTable(['PLATFORM USER', 'BOUND'], rows, context.stdout.columns ?? Infinity)) context.out(line);
    });

  withHubOptions(identities.command('link'))
    .description('bind a platform user to a hub user')
    .argument('<username>', 'the hub user')
    .argument('<channel:id>', 'the platform user: slack:U0123ABCD, telegram:123456789, mattermost:<user id>')
    .action(async (username: string, reference: string, options: HubOptions) => {
      const client = connect(context, options);
      const { channel, id } = platformUser(reference);
      const user = await userNamed(client, username);
      await client.post(`/users/${user.id}/identities`, { channel, platform_user_id: id });
      context.out(`${channel}:${sanitize(id)} is ${sanitize(user.username)} now: their approval clicks count as that user's.`);
    });

  withHubOptions(identities.command('unlink'))
    .description('unbind a platform user from a hub user')
    .argument('<username>', 'the hub user')
    .argument('<channel:id>', 'the platform user, as `link` took it')
    .action(async (username: string, reference: string, options: HubOptions) => {
      const client = connect(context, options);
      const { channel, id } = platformUser(reference);
      const user = await userNamed(client, username);
      await client.delete(`/users/${user.id}/identities/${channel}/${encodeURIComponent(id)}`);
      context.out(`${channel}:${sanitize(id)} is no longer bound to ${sanitize(user.username)}.`);
    });
}

function platformUser(reference: string): { channel: string; id: string } {
  const split = reference.indexOf(':');
  const channel = split > 0 ? reference.slice(0, split) : '';
  const id = reference.slice(split + 1);
  if (!CHANNELS.includes(channel) || id === '')
    throw new CliError(`"${sanitize(reference)}": give <channel>:<platform user id>, channel one of ${CHANNELS.join(', ')}`);
  return { channel, id };
}

/** The hub user by username (any case), from the admin's user list. */
async function userNamed(client: HubClient, username: string): Promise<{ id: string; username: string }> {
  const wanted = username.toLowerCase();
  for (let cursor: string | null = null; ;) {
    const page: { items: { id: string; username: string }[]; next_cursor: string | null } = await client.get(
      `/users?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
    );
    const found = page.items.find((user) => user.username.toLowerCase() === wanted);
    if (found) return found;
    if (!page.next_cursor) throw new CliError(`no hub user named "${sanitize(username)}"`);
    cursor = page.next_cursor;
  }
}
