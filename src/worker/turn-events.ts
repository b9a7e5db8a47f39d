import { WORKING_STATES, type AgentEvent } from '../core/events';
import type { EventLog, TurnRegistry } from '../core/turns';

/**
 * The events of one running turn, on their way to the event log. Each carries the turn's id. Appends
 * are not awaited one by one (the log numbers them in call order, and the Redis driver pipelines what
 * one tick sends): `flush` waits for all of them and reports the first failure. Working states also
 * go to the turn registry, so a socket that connects mid-turn is told the current state.
 */
export class TurnEvents {
  private pending: Promise<unknown>[] = [];
  private failure: unknown = null;
  /** Tool calls whose `tool_start` went out and whose `tool_end` did not (yet), by call id. */
  private readonly open = new Map<string, { toolName: string; startedAt: number }>();

  constructor(
    private readonly deps: { events: EventLog; registry: TurnRegistry },
    readonly sessionId: string,
    readonly turnId: string,
    /** Called once, at the turn's first `token` event (the stage metrics' first token). */
    private onFirstToken: (() => void) | null = null,
  ) {}

  /** Sends an event; resolves at once (use `flush` to wait until everything sent is in the log). */
  send(event: AgentEvent): Promise<void> {
    if (this.onFirstToken && event.type === 'token') {
      this.onFirstToken();
      this.onFirstToken = null;
    }
    if (event.type === 'tool_start') this.open.set(event.payload.tool_call_id, { toolName: event.payload.tool_name, startedAt: performance.now() });
    else if (event.type === 'tool_end') this.open.delete(event.payload.tool_call_id);
    const payload = { ...event.payload, turn_id: this.turnId };
    this.track(this.deps.events.append(this.sessionId, { type: event.type, payload } as AgentEvent));
    if (event.type === 'agent_state' && WORKING_STATES.has(event.payload.state)) {
      this.track(this.deps.registry.update(this.sessionId, this.turnId, { state: event.payload.state }));
    }
    return Promise.resolve();
  }

  /** The calls started and not ended, oldest first, with how long they have been open. */
  openToolCalls(): { toolCallId: string; toolName: string; durationMs: number }[] {
    const now = performance.now();
    return [...this.open].map(([toolCallId, call]) => ({ toolCallId, toolName: call.toolName, durationMs: Math.round(now - call.startedAt) }));
  }

  /** Waits until every event sent so far is in the log; throws the first append that failed. */
  async flush(): Promise<void> {
    const pending = this.pending;
    this.pending = [];
    await Promise.all(pending);
    if (this.failure) throw this.failure;
  }

  private track(promise: Promise<unknown>): void {
    this.pending.push(
      promise.catch((error: unknown) => {
        this.failure ??= error;
      }),
    );
    // Bounded: a long stream keeps only what is still in flight.
    if (this.pending.length > 256) {
      const settled = this.pending;
      this.pending = [Promise.all(settled)];
    }
  }
}
