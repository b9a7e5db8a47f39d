import type { Command } from 'commander';
import type { HubClient } from '../api-client';
import { connect, type CliContext } from '../context';
import { CliError } from '../exit-codes';
import { MIN_ID_PREFIX, shortId } from '../sessions-lookup';
import { formatTable } from '../terminal/table';
import { formatTime, sanitize } from '../terminal/text';
import { jsonOption, withHubOptions, type HubOptions } from './hub-options';

/** An approval as `GET /approvals` lists it (the fields the CLI shows). */
interface ApprovalItem {
  id: string;
  tool: string;
  message: string;
  state: string;
  requester: string;
  workflow: string | null;
  created_at: string;
  progress: { approvals: number; quorum: number; text: string };
}

interface ClickAnswer {
  counted: boolean;
  decided: string | null;
  progress: { approvals: number; quorum: number; text: string };
}

const STATES = ['pending', 'approved', 'denied', 'timed_out', 'abandoned', 'all'];

/** `switchboard approvals list | allow | deny`: the approvals you may decide (issue 30). */
export function registerApprovals(program: Command, context: CliContext): void {
  const approvals = program.command('approvals').description('list and decide the tool approvals you may give (approval policies of workflows)');

  withHubOptions(approvals.command('list'))
    .description('the approvals you may decide, newest first')
    .option('--state <state>', `one of ${STATES.join(', ')}`, 'pending')
    .addOption(jsonOption())
    .action(async (options: HubOptions & { state: string; json?: boolean }) => {
      if (!STATES.includes(options.state)) throw new CliError(`--state: one of ${STATES.join(', ')}`);
      const items = await list(connect(context, options), options.state);
      if (options.json) return context.out(JSON.stringify(items, null, 2));
      if (items.length === 0) return context.out(`No ${options.state === 'all' ? '' : `${options.state} `}approvals for you.`);
      const rows = items.map((item) => [
        shortId(item.id),
        sanitize(item.tool),
        item.state,
        `${item.progress.approvals} of ${item.progress.quorum}`,
        sanitize(item.workflow ?? '-'),
        formatTime(item.created_at),
        sanitize(item.message),
      ]);
      for (const line of formatTable(['ID', 'TOOL', 'STATE', 'APPROVED', 'WORKFLOW', 'ASKED', 'CALL'], rows, context.stdout.columns ?? Infinity))
        context.out(line);
    });

  for (const [name, action, description] of [
    ['allow', 'allow', 'approve the call (counts once toward the quorum)'],
    ['deny', 'deny', 'refuse the call (one approver’s deny decides)'],
  ] as const) {
    withHubOptions(approvals.command(name))
      .description(description)
      .argument('<id>', 'the approval id (or its first characters, as `approvals list` shows it)')
      .option('--all-session', name === 'allow' ? 'allow the tool for the rest of that session (allow_all)' : 'disable the tool for the rest of that session')
      .action(async (reference: string, options: HubOptions & { allSession?: boolean }) => {
        const client = connect(context, options);
        const item = await find(client, reference);
        const chosen = options.allSession ? (action === 'allow' ? 'allow_all' : 'disable') : action;
        const answer = await client.post<ClickAnswer>(`/approvals/${item.id}`, { action: chosen });
        const outcome = answer.decided ? `decided: ${answer.decided}` : `counted (${answer.progress.approvals} of ${answer.progress.quorum})`;
        context.out(`${sanitize(item.tool)} ${shortId(item.id)}: ${outcome}.`);
      });
  }
}

function list(client: HubClient, state: string): Promise<ApprovalItem[]> {
  return client.get<{ items: ApprovalItem[] }>(`/approvals?state=${encodeURIComponent(state)}&limit=100`).then((page) => page.items);
}

/** A pending approval by id or id prefix. */
async function find(client: HubClient, reference: string): Promise<ApprovalItem> {
  const wanted = reference.trim().toLowerCase();
  if (wanted.length < MIN_ID_PREFIX) throw new CliError(`an approval id needs at least ${MIN_ID_PREFIX} characters`);
  const matches = (await list(client, 'pending')).filter((item) => item.id.startsWith(wanted));
  if (matches.length === 1) return matches[0]!;
  if (matches.length === 0) throw new CliError(`no pending approval of yours starts with "${sanitize(reference)}" (switchboard approvals list)`);
  throw new CliError(`"${sanitize(reference)}" names ${matches.length} approvals: give more characters`);
}
