import type { AgentState } from '../../../src/protocol/frames';
import { STATE_LABELS } from './transcript';

/**
 * What the agent is doing now: a live status for screen readers, a pulsing pill for eyes. `queued`:
 * a sent message waits for a worker to start its turn (never shown as "Ready").
 */
export function AgentStateIndicator({ state, running, queued = false }: { state: AgentState; running: boolean; queued?: boolean }) {
  const busy = running && state !== 'idle';
  const label = queued && !busy ? 'Queued' : STATE_LABELS[state];
  return (
    <div
      className={`agent-state ${busy ? 'busy' : ''} ${queued && !busy ? 'queued' : ''} state-${state}`}
      role="status"
      aria-live="polite"
      aria-label={`Agent: ${label}`}
    >
      <span className="dot" aria-hidden="true" />
      {label}
      {(busy || queued) && '…'}
    </div>
  );
}
