import { WORKING_STATES, type SessionFrame } from '../../../src/protocol/frames';
import type { Transcript, TranscriptAction } from './transcript';

/**
 * A message the hub took in whose turn has not started: queued behind no worker, or behind busy
 * ones. Shown as waiting ("Queued"), with the hub's reason once it sends one (a non-final
 * `error WORKER_UNAVAILABLE`), never as "Ready" and never as an error left under the answer.
 */
export interface WaitingTurn {
  turnId: string;
  /** The hub's word on why nothing runs it yet; null until it says. */
  reason: string | null;
}

/** The waiting turn after `action` (the same object when nothing changed). */
export function nextWaiting(state: Transcript, action: TranscriptAction): WaitingTurn | null {
  switch (action.type) {
    case 'user_sent': {
      const id = action.message.id;
      // Its frames may come before the REST answer: a turn already seen is not waiting.
      const seen = id in state.turns || state.items.some((item) => item.kind === 'assistant' && item.turnId === id);
      return seen ? null : { turnId: id, reason: null };
    }
    case 'frame':
      return afterFrame(state.waiting, action.frame);
    case 'history':
    case 'user_sending':
    case 'user_failed':
    case 'notice':
    case 'confirm_answered':
      return state.waiting;
  }
}

function afterFrame(waiting: WaitingTurn | null, frame: SessionFrame): WaitingTurn | null {
  if (!waiting || frame.type === 'pong') return waiting;
  const turnId = frame.payload.turn_id ?? null;
  if (frame.type === 'error' && frame.payload.code === 'WORKER_UNAVAILABLE') {
    return turnId === null || turnId === waiting.turnId ? { ...waiting, reason: frame.payload.message } : waiting;
  }
  // Any other frame of the turn: it started (or ended, cancelled while queued).
  if (turnId === waiting.turnId) return null;
  if (turnId === null && frame.type === 'agent_state' && WORKING_STATES.has(frame.payload.state)) return null;
  return waiting;
}
