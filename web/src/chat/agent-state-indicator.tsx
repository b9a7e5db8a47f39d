import type { AgentState } from '../../../src/protocol/frames';
import { STATE_LABELS } from './transcript';

/** What the agent is doing now: a live status for screen readers, a pulsing pill for eyes. */
export function AgentStateIndicator({ state, running }: { state: AgentState; running: boolean }) {
  const busy = running && state !== 'idle';
  return (
    <div className={`agent-state ${busy ? 'busy' : ''} state-${state}`} role="status" aria-live="polite" aria-label={`Agent: ${STATE_LABELS[state]}`}>
      <span className="dot" aria-hidden="true" />
      {STATE_LABELS[state]}
      {busy && '…'}
    </div>
  );
}
