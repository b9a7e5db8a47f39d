import type { Command } from 'commander';
import { connect, type CliContext } from '../context';
import { CliError } from '../exit-codes';
import { formatTable } from '../terminal/table';
import { formatTime, sanitize } from '../terminal/text';
import { jsonOption, positiveInteger, withHubOptions, type HubOptions } from './hub-options';

interface DeliveryRow {
  id: string;
  workflow: string;
  source: string;
  name: string;
  status: string;
  deliver: string;
  attempts: number;
  reason: string | null;
  platform_message_id: string | null;
  created_at: string;
}

interface ScheduleRow {
  workflow: string;
  name: string;
  cron: string;
  timezone: string;
  paused: boolean;
  next_fire_at: string | null;
  last_fire_at: string | null;
  last_outcome: string | null;
}

type Page<T> = { items: T[] };

/** `switchboard events deliveries | schedules | fire`: webhook and schedule deliveries, schedules, firing one now (admins). */
export function registerEvents(program: Command, context: CliContext): void {
  const events = program.command('events').description('webhook and schedule deliveries, schedules, and firing a schedule now (admins)');

  withHubOptions(events.command('deliveries'))
    .description('recent deliveries of webhooks and schedules, newest first: received → verified → turn → delivered or failed')
    .option('--workflow <name>', 'only this workflow')
    .option('--status <status>', 'only this status (received, verified, turn, delivered, failed)')
    .option('--limit <n>', 'how many (at most 100)', positiveInteger, 20)
    .addOption(jsonOption())
    .action(async (options: HubOptions & { workflow?: string; status?: string; limit: number; json?: boolean }) => {
      const query = new URLSearchParams({ limit: String(options.limit) });
      if (options.workflow) query.set('workflow', options.workflow);
      if (options.status) query.set('status', options.status);
      const page = await connect(context, options).get<Page<DeliveryRow>>(`/hooks/deliveries?${query.toString()}`);
      if (options.json) return context.out(JSON.stringify(page.items, null, 2));
      if (page.items.length === 0) return context.out('No deliveries.');
      const rows = page.items.map((item) => [
        formatTime(item.created_at),
        sanitize(`${item.workflow}/${item.name}`),
        item.source,
        item.status,
        sanitize(item.deliver),
        String(item.attempts),
        sanitize(item.platform_message_id ?? item.reason ?? ''),
      ]);
      for (const line of formatTable(
        ['RECEIVED', 'EVENT', 'SOURCE', 'STATUS', 'DELIVER', 'TRIES', 'MESSAGE / REASON'],
        rows,
        context.stdout.columns ?? Infinity,
      ))
        context.out(line);
    });

  withHubOptions(events.command('schedules'))
    .description('every schedule with its next and last fire and the last outcome')
    .option('--workflow <name>', 'only this workflow')
    .addOption(jsonOption())
    .action(async (options: HubOptions & { workflow?: string; json?: boolean }) => {
      const query = options.workflow ? `?workflow=${encodeURIComponent(options.workflow)}` : '';
      const page = await connect(context, options).get<Page<ScheduleRow>>(`/schedules${query}`);
      if (options.json) return context.out(JSON.stringify(page.items, null, 2));
      if (page.items.length === 0) return context.out('No schedules.');
      const rows = page.items.map((item) => [
        sanitize(`${item.workflow}/${item.name}`),
        sanitize(`${item.cron} (${item.timezone})`),
        item.paused ? 'paused' : formatTime(item.next_fire_at),
        formatTime(item.last_fire_at),
        item.last_outcome ?? '',
      ]);
      for (const line of formatTable(['SCHEDULE', 'CRON', 'NEXT', 'LAST', 'OUTCOME'], rows, context.stdout.columns ?? Infinity)) context.out(line);
    });

  registerFire(events, context);
}

/** `switchboard events fire <workflow>/<schedule>`: fires a schedule now. */
function registerFire(events: Command, context: CliContext): void {
  withHubOptions(events.command('fire'))
    .description('fire a schedule now (paused or not); prints the delivery id')
    .argument('<schedule>', '<workflow>/<schedule>')
    .action(async (reference: string, options: HubOptions) => {
      const [workflow, name] = reference.split('/');
      if (!workflow || !name) throw new CliError('name the schedule as <workflow>/<schedule>');
      const fired = await connect(context, options).post<{ delivery_id: string }>(`/schedules/${encodeURIComponent(workflow)}/${encodeURIComponent(name)}/run`);
      context.out(fired.delivery_id);
    });
}
