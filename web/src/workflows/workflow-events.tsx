import { api } from '../api/client';
import { apiOrigin } from '../api/origin';
import type { Workflow } from '../api/types';
import { ErrorNote, Loading } from '../components/ui';
import { useLoad } from '../lib/use-load';

interface Delivery {
  id: string;
  source: string;
  name: string;
  status: string;
  deliver: string;
  attempts: number;
  reason: string | null;
  platform_message_id: string | null;
  created_at: string;
}

interface Schedule {
  name: string;
  cron: string;
  timezone: string;
  paused: boolean;
  next_fire_at: string | null;
  last_fire_at: string | null;
  last_outcome: string | null;
}

/** A test request for a hook, as a shell command (the secret stays a placeholder). */
function testCurl(url: string, verify: string): string {
  const auth = verify === 'token' ? " -H 'Authorization: Bearer <token>'" : verify === 'none' ? '' : ' # sign it as your sender does';
  return `curl -X POST '${url}' -H 'Content-Type: application/json'${auth} -d '{}'`;
}

/** A workflow's webhooks (URL and a test curl), its schedules, and its recent deliveries (admins). */
export function WorkflowEvents({ workflow }: { workflow: Workflow }) {
  const hooks = workflow.events?.webhooks ?? [];
  const schedules = useLoad((signal) => api.get<{ items: Schedule[] }>(`/schedules?workflow=${encodeURIComponent(workflow.name)}`, signal), [workflow.name]);
  const deliveries = useLoad(
    (signal) => api.get<{ items: Delivery[] }>(`/hooks/deliveries?workflow=${encodeURIComponent(workflow.name)}&limit=10`, signal),
    [workflow.name],
  );
  return (
    <section className="card" aria-labelledby="events-title">
      <h2 id="events-title">Events</h2>
      <h3>Webhooks</h3>
      {hooks.length === 0 ? (
        <p className="muted">
          No webhooks: add them under <code>events.webhooks</code>.
        </p>
      ) : (
        <ul>
          {hooks.map((hook) => {
            const url = `${apiOrigin()}/api/v1/hooks/${workflow.name}/${hook.name}`;
            return (
              <li key={hook.name}>
                <strong>{hook.name}</strong> ({hook.verify}) → {hook.deliver}
                <pre aria-label={`test request for ${hook.name}`}>{testCurl(url, hook.verify)}</pre>
                <button type="button" className="btn" onClick={() => void navigator.clipboard?.writeText(testCurl(url, hook.verify))}>
                  Copy curl
                </button>
              </li>
            );
          })}
        </ul>
      )}
      <h3>Schedules</h3>
      {schedules.error && <ErrorNote onRetry={schedules.reload}>{schedules.error}</ErrorNote>}
      {!schedules.data && !schedules.error ? (
        <Loading />
      ) : (schedules.data?.items.length ?? 0) === 0 ? (
        <p className="muted">No schedules.</p>
      ) : (
        <ul>
          {schedules.data!.items.map((item) => (
            <li key={item.name}>
              <strong>{item.name}</strong> <code>{item.cron}</code> ({item.timezone}) — {item.paused ? 'paused' : `next ${item.next_fire_at ?? '–'}`}, last{' '}
              {item.last_fire_at ?? '–'} {item.last_outcome ?? ''}
            </li>
          ))}
        </ul>
      )}
      <h3>Recent deliveries</h3>
      {deliveries.error && <ErrorNote onRetry={deliveries.reload}>{deliveries.error}</ErrorNote>}
      {!deliveries.data && !deliveries.error ? (
        <Loading />
      ) : (
        <ul>
          {(deliveries.data?.items ?? []).map((item) => (
            <li key={item.id}>
              {item.created_at} {item.source} <strong>{item.name}</strong>: {item.status} → {item.deliver}
              {item.platform_message_id ? ` (${item.platform_message_id})` : item.reason ? ` — ${item.reason}` : ''}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
