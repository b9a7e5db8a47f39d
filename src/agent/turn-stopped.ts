/**
 * Why a running turn was stopped early: the reason its abort signal carries. A `cancel` ends the turn
 * for good (its open tool round is stored with each call's reason); at a `shutdown` the job is handed
 * back and redelivered, so an open tool round stays as it is, to be resumed.
 */
export class TurnStopped extends Error {
  constructor(readonly reason: 'cancel' | 'shutdown') {
    super(reason);
  }
}

/** True when the signal was aborted by a cancel (not a shutdown, not still running). */
export function cancelledBy(signal: AbortSignal): boolean {
  return signal.aborted && signal.reason instanceof TurnStopped && signal.reason.reason === 'cancel';
}
