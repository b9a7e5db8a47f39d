import type { Command } from 'commander';
import { connect, type CliContext } from '../context';
import type { SessionView, UserView } from '../../protocol/payloads';
import { listAll, resolveSession, shortId } from '../sessions-lookup';
import { formatTable } from '../terminal/table';
import { formatCount, formatTime, sanitize } from '../terminal/text';
import { workflowNames } from '../workflow-names';
import { jsonOption, positiveInteger, withHubOptions, type HubOptions } from './hub-options';

interface ListOptions extends HubOptions {
  archived?: boolean;
  mine?: boolean;
  limit: number;
  json?: boolean;
}

/** `switchboard sessions [list|show|archive|restore]`: the caller's sessions (an admin's: everyone's). */
export function registerSessions(program: Command, context: CliContext): void {
  const sessions = program.command('sessions').description('list, show, archive and restore chat sessions');

  withHubOptions(sessions.command('list', { isDefault: true }))
    .description("list sessions, most recently created first (admins see every user's)")
    .option('--archived', 'include archived sessions')
    .option('--mine', 'only your own sessions (for admins)')
    .option('--limit <n>', 'show at most this many', positiveInteger, 20)
    .addOption(jsonOption())
    .action(async (options: ListOptions) => {
      const limit = options.limit;
      const client = connect(context, options);
      let items = await listAll<SessionView>(client, '/sessions', { include_archived: String(options.archived === true) }, options.mine ? Infinity : limit);
      if (options.mine) {
        const me = await client.get<UserView>('/auth/me');
        items = items.filter((session) => session.owner_id === me.id).slice(0, limit);
      }
      if (options.json) return context.out(JSON.stringify(items, null, 2));
      if (items.length === 0)
        return context.out(options.archived ? 'No sessions.' : 'No open sessions (--archived shows archived ones). `switchboard chat --new` starts one.');
      const names = await workflowNames(client);
      const rows = items.map((session) => [
        shortId(session.id),
        session.archived_at ? 'archived' : session.state,
        session.channel,
        session.active_workflow_id ? (names.get(session.active_workflow_id) ?? session.active_workflow_id) : '—',
        formatTime(session.updated_at),
        sanitize(session.name),
      ]);
      for (const line of formatTable(['ID', 'STATE', 'CHANNEL', 'WORKFLOW', 'UPDATED', 'NAME'], rows, context.stdout.columns ?? Infinity)) context.out(line);
    });

  withHubOptions(sessions.command('show'))
    .description('show one session: state, workflow, tools, token counts, message count')
    .argument('<session>', 'session id, or its first characters')
    .addOption(jsonOption())
    .action(async (reference: string, options: HubOptions & { json?: boolean }) => {
      const client = connect(context, options);
      const session = await resolveSession(client, reference);
      if (options.json) return context.out(JSON.stringify(session, null, 2));
      const messages = await client.get<{ total: number }>(`/sessions/${session.id}/messages?limit=1`);
      const workflow = session.active_workflow_id
        ? ((await workflowNames(client)).get(session.active_workflow_id) ?? session.active_workflow_id)
        : '— (routed per message)';
      const { input_tokens: input, output_tokens: output, total_tokens: total } = session.token_counts;
      const fields: [string, string][] = [
        ['Session', session.id],
        ['Name', sanitize(session.name)],
        ['Channel', session.session_key ? `${session.channel} (${sanitize(session.session_key)})` : session.channel],
        ['State', session.archived_at ? `archived (${formatTime(session.archived_at)})` : session.state],
        ['Workflow', workflow],
        ['Tools', session.active_tools.length > 0 ? session.active_tools.join(', ') : '—'],
        ['Tokens', `${formatCount(total)} (${formatCount(input)} in, ${formatCount(output)} out)`],
        ['Messages', formatCount(messages.total)],
        ['Owner', session.owner_id],
        ['Created', formatTime(session.created_at)],
        ['Updated', formatTime(session.updated_at)],
      ];
      for (const [name, value] of fields) context.out(`${context.colors.bold(name.padEnd(9))} ${value}`);
    });

  withHubOptions(sessions.command('archive'))
    .description('archive a session: it stays readable but takes no messages (restore brings it back)')
    .argument('<session>', 'session id, or its first characters')
    .action(async (reference: string, options: HubOptions) => {
      const client = connect(context, options);
      const session = await resolveSession(client, reference);
      await client.delete(`/sessions/${session.id}`);
      context.out(`Archived session ${session.id} ("${sanitize(session.name)}"). \`switchboard sessions restore ${session.id}\` brings it back.`);
    });

  withHubOptions(sessions.command('restore'))
    .description('restore an archived session')
    .argument('<session>', 'session id, or its first characters')
    .action(async (reference: string, options: HubOptions) => {
      const client = connect(context, options);
      const session = await resolveSession(client, reference);
      await client.post(`/sessions/${session.id}/restore`);
      context.out(`Restored session ${session.id} ("${sanitize(session.name)}"): \`switchboard chat --session ${session.id}\` continues it.`);
    });
}
