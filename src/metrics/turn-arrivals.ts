import type { Context } from '@opentelemetry/api';

/** How many accepted turns are remembered until their first answer is delivered (the oldest go first). */
export const TURN_ARRIVALS_LIMIT = 10_000;

export interface Arrival {
  /** When the hub received the message (`performance.now()`: the same process delivers it). */
  receivedMark: number;
  channel: string;
  /** The turn's trace, when traces are on: the channel's `deliver` span joins it. */
  trace: Context | null;
}

/**
 * The turns this process took in, until the channel delivers their first answer frame: then the
 * time from message received to first answer is known (`switchboard_turn_first_answer_seconds`).
 * Only the process that took the message in knows when it arrived; a turn delivered elsewhere (a
 * REST message whose socket is on another API process) is measured by its stages only. Bounded:
 * a turn whose answer never comes here is forgotten after TURN_ARRIVALS_LIMIT newer ones.
 */
export class TurnArrivals {
  private readonly arrivals = new Map<string, Arrival>();

  constructor(private readonly limit = TURN_ARRIVALS_LIMIT) {}

  add(turnId: string, arrival: Arrival): void {
    this.arrivals.set(turnId, arrival);
    if (this.arrivals.size > this.limit) this.arrivals.delete(this.arrivals.keys().next().value!);
  }

  /** The turn's arrival, once: the first answer is delivered once. */
  take(turnId: string): Arrival | undefined {
    const arrival = this.arrivals.get(turnId);
    if (arrival) this.arrivals.delete(turnId);
    return arrival;
  }
}
