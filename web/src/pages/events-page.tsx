import { useEffect, useState } from 'react';
import { useSearchParams } from 'react-router';
import { api, errorMessage } from '../api/client';
import { apiOrigin } from '../api/origin';
import type { Page, Workflow } from '../api/types';
import { useAuth } from '../auth/auth-context';
import { ErrorNote, Loading, Note, PageHeader } from '../components/ui';
import { DeliveriesTable, EventsEmpty, WorkflowEventsCard, type EventDelivery, type EventSchedule, type ScheduleAction } from '../events/events-view';
import { docsUrl } from '../lib/docs';
import { useLoad } from '../lib/use-load';

/** How often the schedules and deliveries are read again while the page is open (no socket carries them). */
export const EVENTS_REFRESH_MS = 5_000;

/** Reloads on an interval while the tab is visible, and at once when the window gets focus again. */
function useLiveReload(reloads: (() => void)[]): void {
  useEffect(() => {
    const all = () => reloads.forEach((reload) => reload());
    const timer = setInterval(() => {
      if (document.visibilityState === 'visible') all();
    }, EVENTS_REFRESH_MS);
    window.addEventListener('focus', all);
    return () => {
      clearInterval(timer);
      window.removeEventListener('focus', all);
    };
  }, reloads);
}

/** Events: every workflow's webhooks and schedules, and the recent deliveries (admins: the endpoints are theirs). */
export function EventsPage() {
  const { user } = useAuth();
  if (user?.role !== 'admin') {
    return (
      <>
        <PageHeader title="Events" />
        <Note>Only administrators see webhooks, schedules and deliveries.</Note>
      </>
    );
  }
  return <AdminEvents />;
}

function AdminEvents() {
  const [params, setParams] = useSearchParams();
  const only = params.get('workflow') ?? '';
  const filter = only ? `workflow=${encodeURIComponent(only)}&` : '';
  const workflows = useLoad((signal) => api.get<Page<Workflow>>('/assistant/workflows?limit=100', signal), []);
  const schedules = useLoad((signal) => api.get<{ items: EventSchedule[] }>(`/schedules?${filter}`, signal), [filter]);
  const deliveries = useLoad((signal) => api.get<{ items: EventDelivery[] }>(`/hooks/deliveries?${filter}limit=20`, signal), [filter]);
  useLiveReload([schedules.reload, deliveries.reload, workflows.reload]);
  const [busy, setBusy] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);

  const act = async (item: EventSchedule, action: ScheduleAction) => {
    setBusy(`${item.workflow}/${item.name}`);
    setError(null);
    try {
      await api.post(`/schedules/${encodeURIComponent(item.workflow)}/${encodeURIComponent(item.name)}/${action}`, {});
    } catch (failure) {
      setError(errorMessage(failure));
    } finally {
      setBusy(null);
      schedules.reload();
      deliveries.reload();
    }
  };

  const withEvents = (workflows.data?.items ?? []).filter((item) => (item.events?.webhooks.length ?? 0) + (item.events?.schedules.length ?? 0) > 0);
  const shown = only ? withEvents.filter((item) => item.name === only) : withEvents;
  const loadError = workflows.error ?? schedules.error;
  return (
    <>
      <PageHeader
        title="Events"
        description={
          <>
            Signed webhooks and schedules that run a workflow and post its answer into a chat. Refreshed every few seconds and when you come back to this tab.
          </>
        }
        actions={
          withEvents.length > 1 && (
            <label className="inline-field">
              <span>Workflow</span>
              <select value={only} onChange={(event) => setParams(event.target.value ? { workflow: event.target.value } : {})}>
                <option value="">All</option>
                {withEvents.map((item) => (
                  <option key={item.name}>{item.name}</option>
                ))}
              </select>
            </label>
          )
        }
      />
      <ErrorNote>{error}</ErrorNote>
      {loadError ? (
        <ErrorNote onRetry={() => (workflows.error ? workflows.reload() : schedules.reload())}>{loadError}</ErrorNote>
      ) : !workflows.data || !schedules.data ? (
        <Loading />
      ) : shown.length === 0 ? (
        <EventsEmpty guide={docsUrl('guides/events')} />
      ) : (
        <div className="stack">
          {shown.map((workflow) => (
            <WorkflowEventsCard
              key={workflow.name}
              workflow={workflow}
              schedules={schedules.data!.items.filter((item) => item.workflow === workflow.name)}
              origin={apiOrigin()}
              onScheduleAction={(item, action) => void act(item, action)}
              busy={busy}
            />
          ))}
        </div>
      )}
      <section className="card" aria-labelledby="deliveries-title">
        <h2 id="deliveries-title">Recent deliveries</h2>
        {deliveries.error ? (
          <ErrorNote onRetry={deliveries.reload}>{deliveries.error}</ErrorNote>
        ) : !deliveries.data ? (
          <Loading />
        ) : (
          <DeliveriesTable items={deliveries.data.items} />
        )}
      </section>
    </>
  );
}
