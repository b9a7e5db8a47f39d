import { useState } from 'react';
import { Link } from 'react-router';
import type { Workflow, WorkflowWebhook } from '../api/types';
import { Badge, EmptyState } from '../components/ui';
import { dateTime, timeAgo } from '../lib/format';
import { hookCurl } from './hook-curl';

/** A delivery as `GET /api/v1/hooks/deliveries` lists it (the fields shown). */
export interface EventDelivery {
  id: string;
  workflow: string;
  source: 'webhook' | 'schedule';
  name: string;
  status: 'received' | 'verified' | 'turn' | 'delivered' | 'failed';
  deliver: string;
  attempts: number;
  reason: string | null;
  platform_message_id: string | null;
  created_at: string;
}

/** A schedule as `GET /api/v1/schedules` lists it. */
export interface EventSchedule {
  workflow: string;
  name: string;
  cron: string;
  timezone: string;
  deliver: string;
  paused: boolean;
  next_fire_at: string | null;
  last_fire_at: string | null;
  last_outcome: string | null;
}

export type ScheduleAction = 'pause' | 'resume' | 'run';

const STATUS_TONE = { delivered: 'success', failed: 'danger', turn: 'accent', verified: 'neutral', received: 'neutral' } as const;

export function DeliveryStatus({ status }: { status: EventDelivery['status'] }) {
  return <Badge tone={STATUS_TONE[status] ?? 'neutral'}>{status}</Badge>;
}

/** What to write when no workflow declares events yet. */
export function EventsEmpty({ guide }: { guide: string }) {
  return (
    <EmptyState title="No webhooks or schedules yet">
      Declare them under <code>events:</code> in a workflow's YAML — <code>webhooks:</code> (name, verify, secret_env, message, deliver) and{' '}
      <code>schedules:</code> (name, cron, timezone, message, deliver) — then they show here with their URL, next run and deliveries. See{' '}
      <a href={guide} target="_blank" rel="noreferrer">
        Events: webhooks and schedules
      </a>
      .
    </EmptyState>
  );
}

function CopyButton({ text, label }: { text: string; label: string }) {
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    await navigator.clipboard?.writeText(text);
    setCopied(true);
    setTimeout(() => setCopied(false), 2000);
  };
  return (
    <button type="button" className="btn small" aria-label={label} onClick={() => void copy()}>
      {copied ? 'Copied' : 'Copy curl'}
    </button>
  );
}

function HookRow({ hook, url }: { hook: WorkflowWebhook; url: string }) {
  const curl = hookCurl(url, hook);
  return (
    <li className="event-hook">
      <div className="event-hook-head">
        <strong>{hook.name}</strong>
        <Badge>{hook.verify}</Badge>
        {hook.secret_env && <code title="The secret's environment variable">{hook.secret_env}</code>}
        <span className="muted">→ {hook.deliver}</span>
      </div>
      <div className="event-url">
        <code>POST {url}</code>
      </div>
      <div className="event-curl">
        <pre aria-label={`Test request for ${hook.name}`}>{curl}</pre>
        <CopyButton text={curl} label={`Copy the test curl for ${hook.name}`} />
      </div>
    </li>
  );
}

function ScheduleTable({
  items,
  onAction,
  busy,
}: {
  items: EventSchedule[];
  onAction(item: EventSchedule, action: ScheduleAction): void;
  busy: string | null;
}) {
  return (
    <table className="table compact" aria-label="Schedules">
      <thead>
        <tr>
          <th scope="col">Schedule</th>
          <th scope="col">Cron</th>
          <th scope="col">Deliver to</th>
          <th scope="col">Next run</th>
          <th scope="col">Last run</th>
          <th scope="col">
            <span className="sr-only">Actions</span>
          </th>
        </tr>
      </thead>
      <tbody>
        {items.map((item) => (
          <tr key={item.name}>
            <td>
              <strong>{item.name}</strong>
            </td>
            <td>
              <code>{item.cron}</code> <span className="muted small">{item.timezone}</span>
            </td>
            <td>{item.deliver}</td>
            <td title={item.next_fire_at ?? undefined}>{item.paused ? <Badge tone="warning">paused</Badge> : dateTime(item.next_fire_at)}</td>
            <td title={item.last_fire_at ?? undefined}>{item.last_fire_at ? `${timeAgo(item.last_fire_at)} · ${item.last_outcome ?? '—'}` : 'never'}</td>
            <td className="row-actions">
              <button type="button" className="btn small" disabled={busy !== null} onClick={() => onAction(item, 'run')}>
                Run now
              </button>
              <button type="button" className="btn small ghost" disabled={busy !== null} onClick={() => onAction(item, item.paused ? 'resume' : 'pause')}>
                {item.paused ? 'Resume' : 'Pause'}
              </button>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** One workflow's hooks (URL, verify, deliver, a copyable test curl) and schedules (cron, next run). */
export function WorkflowEventsCard({
  workflow,
  schedules,
  origin,
  onScheduleAction,
  busy,
}: {
  workflow: Workflow;
  schedules: EventSchedule[];
  origin: string;
  onScheduleAction(item: EventSchedule, action: ScheduleAction): void;
  busy: string | null;
}) {
  const hooks = workflow.events?.webhooks ?? [];
  return (
    <section className="card events-card" aria-labelledby={`events-${workflow.name}`}>
      <h2 id={`events-${workflow.name}`}>
        <Link to={`/workflows/${encodeURIComponent(workflow.name)}`}>{workflow.name}</Link>
      </h2>
      <h3>Webhooks</h3>
      {hooks.length === 0 ? (
        <p className="muted">None declared.</p>
      ) : (
        <ul className="event-hooks">
          {hooks.map((hook) => (
            <HookRow key={hook.name} hook={hook} url={`${origin}/api/v1/hooks/${encodeURIComponent(workflow.name)}/${encodeURIComponent(hook.name)}`} />
          ))}
        </ul>
      )}
      <h3>Schedules</h3>
      {schedules.length === 0 ? <p className="muted">None declared.</p> : <ScheduleTable items={schedules} onAction={onScheduleAction} busy={busy} />}
    </section>
  );
}

/** Recent deliveries of hooks and schedules, newest first, with their status. */
export function DeliveriesTable({ items }: { items: EventDelivery[] }) {
  if (items.length === 0) return <p className="muted">No deliveries yet: send a hook its test request, or run a schedule now.</p>;
  return (
    <table className="table compact" aria-label="Recent deliveries">
      <thead>
        <tr>
          <th scope="col">When</th>
          <th scope="col">Event</th>
          <th scope="col">Status</th>
          <th scope="col">Deliver to</th>
          <th scope="col">Result</th>
        </tr>
      </thead>
      <tbody>
        {items.map((item) => (
          <tr key={item.id}>
            <td title={item.created_at}>{timeAgo(item.created_at)}</td>
            <td>
              {item.workflow}/<strong>{item.name}</strong> <span className="muted small">{item.source}</span>
            </td>
            <td>
              <DeliveryStatus status={item.status} />
            </td>
            <td>{item.deliver}</td>
            <td className="small">
              {item.platform_message_id ? (
                <>
                  message <code>{item.platform_message_id}</code>
                </>
              ) : (
                (item.reason ?? '')
              )}
              {item.attempts > 1 ? <span className="muted"> ({item.attempts} attempts)</span> : null}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
