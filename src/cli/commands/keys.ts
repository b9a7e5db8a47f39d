import type { Command } from 'commander';
import type { Colors } from 'picocolors/types';
import { API_KEY_PREFIX, type HubClient } from '../api-client';
import { connect, type CliContext } from '../context';
import { CliError, EXIT } from '../exit-codes';
import type { ApiKeyView } from '../../protocol/payloads';
import { listAll, MIN_ID_PREFIX, shortId } from '../sessions-lookup';
import { formatTable } from '../terminal/table';
import { formatTime, sanitize } from '../terminal/text';
import { jsonOption, positiveInteger, withHubOptions, type HubOptions } from './hub-options';

/** `switchboard keys create | list | revoke`: API keys (`svc_live_…`) for scripts and SDKs. */
export function registerKeys(program: Command, context: CliContext): void {
  const keys = program.command('keys').description('create, list and revoke API keys (svc_live_…) for scripts');

  withHubOptions(keys.command('create'))
    .description('create an API key for your account; the key is printed once, on stdout, and never again')
    .requiredOption('--label <label>', 'what the key is for (shown in `keys list`)')
    .option('--expires-in-days <days>', 'let the key expire after this many days (default: never)', positiveInteger)
    .addOption(jsonOption('print the new key and its record as JSON'))
    .action(async (options: HubOptions & { label: string; expiresInDays?: number; json?: boolean }) => {
      const client = connect(context, options);
      const created = await client.post<ApiKeyView & { key: string }>('/auth/api-keys', {
        label: options.label,
        ...(options.expiresInDays ? { expires_in_days: options.expiresInDays } : {}),
      });
      if (options.json) return context.out(JSON.stringify(created, null, 2));
      // stdout carries the key alone, so `KEY=$(switchboard keys create --label ci)` works.
      context.out(created.key);
      context.err(
        context.colors.dim(
          `Created API key "${sanitize(created.label)}" (id ${created.id}${created.expires_at ? `, expires ${formatTime(created.expires_at)}` : ''}).`,
        ),
      );
      context.err(context.colors.dim('It is shown only this once: store it now. Use it as SWITCHBOARD_API_KEY=… (or --api-key).'));
    });

  withHubOptions(keys.command('list'))
    .description('list your API keys (never the keys themselves), oldest first')
    .option('--all', "every user's keys (admins)")
    .addOption(jsonOption())
    .action(async (options: HubOptions & { all?: boolean; json?: boolean }) => {
      const items = await listAll<ApiKeyView>(connect(context, options), '/auth/api-keys', options.all ? { all: 'true' } : {});
      if (options.json) return context.out(JSON.stringify(items, null, 2));
      if (items.length === 0) return context.out('No API keys. `switchboard keys create --label <what for>` makes one.');
      const rows = items.map((key) => [
        shortId(key.id),
        `${key.key_prefix}…`,
        status(key, context.colors),
        formatTime(key.created_at),
        formatTime(key.last_used_at),
        sanitize(key.label),
      ]);
      for (const line of formatTable(['ID', 'KEY', 'STATUS', 'CREATED', 'LAST USED', 'LABEL'], rows, context.stdout.columns ?? Infinity)) context.out(line);
    });

  withHubOptions(keys.command('revoke'))
    .description('revoke an API key: requests with it are refused from now on')
    .argument('<key>', "the key's id (or its first characters), or its prefix as `keys list` shows it (svc_live_…)")
    .action(async (reference: string, options: HubOptions) => {
      const client = connect(context, options);
      const key = await findKey(client, reference);
      await client.delete(`/auth/api-keys/${key.id}`);
      context.out(`Revoked API key "${sanitize(key.label)}" (${key.key_prefix}…, id ${key.id}).`);
    });
}

function status(key: ApiKeyView, c: Colors): string {
  if (key.revoked_at) return c.red(`revoked ${formatTime(key.revoked_at)}`);
  if (key.expires_at && Date.parse(key.expires_at) <= Date.now()) return c.yellow('expired');
  return key.expires_at ? `active until ${formatTime(key.expires_at)}` : 'active';
}

/**
 * A key by id, id prefix, or key prefix (the whole key works too, and is never echoed); an admin
 * may name anyone's key. A revoked key matches only when no live one does.
 */
async function findKey(client: HubClient, reference: string): Promise<ApiKeyView> {
  const wanted = reference.trim().replace(/…$/, '');
  const byKey = wanted.startsWith(API_KEY_PREFIX);
  // Only the public prefix of a key ever reaches the screen.
  const shown = byKey ? `${wanted.slice(0, API_KEY_PREFIX.length + 3)}…` : wanted;
  if (wanted.length < MIN_ID_PREFIX) throw new CliError(`"${shown}" is too short to name a key: give its id or its prefix from \`switchboard keys list\`.`);
  const { role } = await client.get<{ role: string }>('/auth/me');
  const keys = await listAll<ApiKeyView>(client, '/auth/api-keys', role === 'admin' ? { all: 'true' } : {});
  const matches = keys.filter((key) =>
    byKey ? key.key_prefix.startsWith(wanted) || wanted.startsWith(key.key_prefix) : key.id.startsWith(wanted.toLowerCase()),
  );
  const live = matches.filter((key) => !key.revoked_at);
  const candidates = live.length > 0 ? live : matches;
  if (candidates.length === 1) return candidates[0]!;
  if (candidates.length === 0) throw new CliError(`No API key matches "${shown}" (see \`switchboard keys list\`).`, EXIT.REFUSED);
  throw new CliError(`"${shown}" matches ${candidates.length} keys (${candidates.map((key) => key.id).join(', ')}): give the id.`, EXIT.REFUSED);
}
