import type { TurnOutcome } from '../core/follow-turn';

/** What names an event in the chat: its source and name. */
interface EventName {
  source: 'webhook' | 'schedule';
  name: string;
}

/**
 * What the delivery chat is told when an event's turn fails or is cancelled: never silence, and never
 * the error's message (it can carry a provider's internals) — the event and the error code.
 * "The deploys hook turn failed: PROVIDER_ERROR."
 */
export function failureNote(event: EventName, outcome: { kind: 'error'; code: string } | { kind: 'cancelled' }): string {
  const what = `The ${event.name} ${event.source === 'webhook' ? 'hook' : 'schedule'} turn`;
  return outcome.kind === 'cancelled' ? `${what} was cancelled.` : `${what} failed: ${outcome.code}.`;
}

/** A delivery's `reason` for an outcome that is not an answer. */
export function describeOutcome(outcome: Exclude<TurnOutcome, { kind: 'done' }>): string {
  switch (outcome.kind) {
    case 'error':
      return `the turn failed: ${outcome.code}`;
    case 'cancelled':
      return 'the turn was cancelled';
    case 'merged':
      return `answered together with turn ${outcome.into}`;
    case 'dropped':
      return 'the turn was dropped';
    case 'stopped':
      return 'the hub stopped before the turn ended';
    default:
      return outcome satisfies never;
  }
}
