import { Link } from 'react-router';
import type { Workflow } from '../api/types';

/** In the editor, a workflow's events in one line; the Events tab shows their URLs, schedules and deliveries. */
export function WorkflowEvents({ workflow }: { workflow: Workflow }) {
  const hooks = workflow.events?.webhooks.length ?? 0;
  const schedules = workflow.events?.schedules.length ?? 0;
  if (hooks + schedules === 0) return null;
  return (
    <section className="card" aria-labelledby="events-title">
      <h2 id="events-title">Events</h2>
      <p className="muted">
        {hooks} {hooks === 1 ? 'webhook' : 'webhooks'}, {schedules} {schedules === 1 ? 'schedule' : 'schedules'}.{' '}
        <Link to={`/events?workflow=${encodeURIComponent(workflow.name)}`}>Their URLs, test requests, next runs and deliveries</Link>
      </p>
    </section>
  );
}
