import { WORKING_STATES, type AgentEvent } from '../core/events';
import type { EventLog, TurnRegistry } from '../core/turns';
import type { OpenToolCall } from './turn-endings';

/** Appends kept in flight before they are folded into one promise (a long stream keeps only what is pending). */
const PENDING_APPENDS_LIMIT = 256;

/**
 * The events of one turn, on their way to the event log. Each carries the turn's id. Appends are not
 * awaited one by one (the log numbers them in call order, and the Redis driver pipelines what one
 * tick sends): `flush` waits for all of them and reports the first failure. Working states also go
 * to the turn registry, so a socket that connects mid-turn is told the current state. Once the
 * frames that end the turn are written (TurnLifecycle.announce), nothing more of the turn is sent.
 */
export class TurnEvents {
  private pending: Promise<unknown>[] = [];
  private failure: unknown = null;
  /** Tool calls whose `tool_start` went out and whose `tool_end` did not (yet), by call id. */
  private readonly open = new Map<string, { toolName: string; startedAt: number }>();
  private ended = false;

  constructor(
    private readonly deps: { events: EventLog; registry: TurnRegistry },
    readonly sessionId: string,
    readonly turnId: string,
    /** Called once, at the turn's first `token` event (the stage metrics' first token). */
    private onFirstToken: (() => void) | null = null,
  ) {}

  /** Sends an event; resolves at once (use `flush` to wait until everything sent is in the log). */
  send(event: AgentEvent): Promise<void> {
    if (this.ended) return Promise.resolve(); // a late tool or model event of a turn that has ended
    this.track(this.deps.events.append(this.sessionId, this.body(event)));
    return Promise.resolve();
  }

  /** Sends events in order as one append (a streamed read's tokens); resolves at once, like `send`. */
  sendAll(events: readonly AgentEvent[]): Promise<void> {
    if (this.ended || events.length === 0) return Promise.resolve();
    if (events.length === 1) return this.send(events[0]!);
    this.track(
      this.deps.events.appendAll(
        this.sessionId,
        events.map((event) => this.body(event)),
      ),
    );
    return Promise.resolve();
  }

  /** The event as the log keeps it (the turn's id in its payload), noted on the way: first token, open tool calls, working state. */
  private body(event: AgentEvent): AgentEvent {
    if (this.onFirstToken && event.type === 'token') {
      this.onFirstToken();
      this.onFirstToken = null;
    }
    if (event.type === 'tool_start') this.open.set(event.payload.tool_call_id, { toolName: event.payload.tool_name, startedAt: performance.now() });
    else if (event.type === 'tool_end') this.open.delete(event.payload.tool_call_id);
    else if (event.type === 'agent_state' && WORKING_STATES.has(event.payload.state)) {
      this.track(this.deps.registry.update(this.sessionId, this.turnId, { state: event.payload.state }));
    }
    // Tokens are most of a turn's events: their payload is made field by field (an object spread
    // copies through a generic path, ~4 % of the hub's CPU on a long stream); same keys, same order.
    if (event.type === 'token') return { type: 'token', payload: { text: event.payload.text, final: event.payload.final, turn_id: this.turnId } };
    return { type: event.type, payload: { ...event.payload, turn_id: this.turnId } } as AgentEvent;
  }

  /** The calls started and not ended, oldest first (the frames that end the turn close them). */
  openToolCalls(): OpenToolCall[] {
    const now = performance.now();
    return [...this.open].map(([toolCallId, call]) => ({ toolCallId, toolName: call.toolName, durationMs: Math.round(now - call.startedAt) }));
  }

  /** Sends the frames that end the turn, then nothing more (see TurnLifecycle.announce). */
  sendLast(frames: readonly AgentEvent[]): Promise<void> {
    for (const frame of frames) void this.send(frame);
    this.ended = true;
    return this.flush();
  }

  /** Waits until every event sent so far is in the log; throws the first append that failed. */
  async flush(): Promise<void> {
    const pending = this.pending;
    this.pending = [];
    await Promise.all(pending);
    if (this.failure) throw this.failure instanceof Error ? this.failure : new Error(String(this.failure));
  }

  private track(promise: Promise<unknown>): void {
    this.pending.push(
      promise.catch((error: unknown) => {
        this.failure ??= error;
      }),
    );
    if (this.pending.length > PENDING_APPENDS_LIMIT) {
      const settled = this.pending;
      this.pending = [Promise.all(settled)];
    }
  }
}
