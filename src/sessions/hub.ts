import { randomUUID } from 'node:crypto';
import { isAnonymousChannel, WEB_CHANNEL, type ChannelScope } from '../core/channel';
import { AppError } from '../core/errors';
import type { AgentState, SessionFrame } from '../core/events';
import type { ApproverGroups, ClientAnswer, ConfirmResult, Hub, Ingested, SessionSummary } from '../core/hub';
import type { ApprovalService } from '../approvals/approval-service';
import type { ChannelName, InboundMessage } from '../core/inbound';
import { runningTurn, type ControlBus, type EventLog, type MidTurnPolicy, type TurnRegistry } from '../core/turns';
import { findOrInsert } from '../db/find-or-insert';
import type { Models } from '../db/models';
import type { TurnStore } from '../db/turn-store';
import type { HubMetrics } from '../metrics/hub-metrics';
import type { TurnArrivals } from '../metrics/turn-arrivals';
import { failed, SpanKind, type Tracing } from '../tracing/tracing';
import type { Actor } from '../core/actor';
import type { TurnService } from '../turns/turn-service';

export interface HubDependencies {
  models: Models;
  store: TurnStore;
  registry: TurnRegistry;
  /** Tools loaded in a new chat session (`agent.default_tools`); none for an anonymous channel's visitors. */
  defaultTools: readonly string[];
  /** The registry's channels (which are anonymous). */
  channels?: readonly ChannelScope[];
  turns: TurnService;
  /** The mid-turn policy of a chat session (its workflow's, else its channel's); read only when a turn runs. */
  midTurnPolicy(channel: ChannelName, sessionId: string): Promise<MidTurnPolicy>;
  events: EventLog;
  control: ControlBus;
  /** Approvals by the right people (issue 30): a click on a governed tool's question is a vote. */
  approvals?: ApprovalService | null;
  /** Stage metrics and the first span of a turn's trace (both optional: off by default). */
  metrics?: HubMetrics | null;
  tracing?: Tracing | null;
  /** Where accepted turns wait for their first answer to be delivered (set with metrics or traces on). */
  arrivals?: TurnArrivals;
}

/** The hub behind the channel adapters' port: storage, queue and event log, one way in. */
export class SwitchboardHub implements Hub {
  readonly events: EventLog;
  readonly control: ControlBus;

  constructor(private readonly deps: HubDependencies) {
    this.events = deps.events;
    this.control = deps.control;
  }

  /**
   * Takes a message in (see Hub.ingest). With metrics or traces on, the time it took is the turn's
   * `accepted` stage, its arrival is kept until the channel delivers the first answer, and the
   * `ingest` span it ran in is the root of the turn's trace (its context goes with the job).
   */
  async ingest(message: InboundMessage): Promise<Ingested> {
    const { metrics, tracing, arrivals } = this.deps;
    if (!metrics && !tracing) return (await this.take(message)).ingested;
    const receivedMark = performance.now();
    const span = tracing?.startSpan(`ingest ${message.channel}`, { kind: SpanKind.PRODUCER, attributes: { 'switchboard.channel': message.channel } }) ?? null;
    try {
      const { ingested, queuedMark } = await this.take(message, span && tracing ? tracing.carrier(span) : undefined);
      span?.setAttributes({
        'switchboard.session_id': ingested.sessionId,
        'switchboard.turn_id': ingested.userMessageId,
        'switchboard.disposition': ingested.disposition,
      });
      if (!ingested.duplicate) {
        // Received → queued (the worker may already run it: the in-process queue hands it over at once).
        if (queuedMark !== null) metrics?.stage('accepted', message.channel, (queuedMark - receivedMark) / 1000);
        arrivals?.add(ingested.userMessageId, { receivedMark, channel: message.channel, trace: span && tracing ? tracing.contextWith(span) : null });
      }
      return ingested;
    } catch (error) {
      if (span) failed(span, error);
      throw error;
    } finally {
      span?.end();
    }
  }

  private async take(message: InboundMessage, trace?: Record<string, string>): Promise<{ ingested: Ingested; queuedMark: number | null }> {
    const { models, turns } = this.deps;
    if (message.externalId) {
      const seen = await models.InboundEvent.findOne({ where: { channel: message.channel, external_id: message.externalId } });
      if (seen && !(await this.abandoned(seen))) {
        // Its first request may have died after storing the message but before queueing its turn.
        if (seen.session_id && seen.message_id) await turns.queueIfStranded(seen.session_id, seen.message_id);
        return { ingested: duplicate(seen.session_id ?? '', seen.message_id ?? ''), queuedMark: null };
      }
      // Its first request died before storing the message and could not free the id (the database went
      // away, the process was killed): this retry takes it in (of two racing, one claims it below).
      if (seen) await models.InboundEvent.destroy({ where: { channel: message.channel, external_id: message.externalId, message_id: seen.message_id } });
    }
    // The turn's id is the claim's from the start: a retry can tell a message that was stored (it is
    // answered with it) from one that never was.
    const turnId = message.turnId ?? randomUUID();
    // A web message names its session (checked at connect); a chat message finds or makes its own.
    const sessionId = message.sessionId ?? (await this.chatSession(message)).id;
    if (message.externalId) {
      // Claimed before the turn is queued: of two deliveries racing, exactly one gets past here.
      const [, created] = await findOrInsert(
        models.InboundEvent,
        { channel: message.channel, external_id: message.externalId },
        { channel: message.channel, external_id: message.externalId, session_id: sessionId, message_id: turnId, created_at: new Date() },
      );
      if (!created) return { ingested: duplicate(sessionId, ''), queuedMark: null };
    }
    const web = message.channel === WEB_CHANNEL;
    let accepted;
    try {
      accepted = await turns.accept({
        sessionId,
        text: message.text,
        mode: message.mode,
        metadata: message.metadata,
        turnId,
        trace,
        sender: senderKey(message),
        // The web channel keeps the spec's TURN_IN_PROGRESS; chat channels follow their policy.
        policy: web ? 'reject' : (id) => this.deps.midTurnPolicy(message.channel, id),
      });
    } catch (error) {
      // Not taken in (e.g. queue down): free the event id so the platform's retry is not lost. A chat
      // channel's TURN_IN_PROGRESS keeps it: that event was answered ("busy"), its retry must not start
      // a turn; a web client told 409 may retry with the same Idempotency-Key.
      if (message.externalId && (web || !(error instanceof AppError && error.code === 'TURN_IN_PROGRESS'))) {
        await models.InboundEvent.destroy({ where: { channel: message.channel, external_id: message.externalId } });
      } else if (message.externalId) {
        // Answered "busy" and kept: no message stands behind it, and it is never taken over.
        await models.InboundEvent.update({ message_id: null }, { where: { channel: message.channel, external_id: message.externalId } });
      }
      throw error;
    }
    const stored = accepted.message;
    return {
      ingested: { sessionId, userMessageId: stored.id, duplicate: false, disposition: accepted.disposition, createdAt: stored.created_at },
      queuedMark: accepted.queuedMark,
    };
  }

  /**
   * A claimed event id whose message is not stored ABANDONED_CLAIM_MS after the claim: the request
   * that claimed it died before storing it and could not free the id. (No message id: an event
   * answered "busy", kept so that its retries are dropped.)
   */
  private async abandoned(seen: { message_id: string | null; created_at: Date }): Promise<boolean> {
    if (seen.message_id === null || Date.now() - new Date(seen.created_at).getTime() <= ABANDONED_CLAIM_MS) return false;
    return (await this.deps.models.Message.count({ where: { id: seen.message_id } })) === 0;
  }

  async amendWaiting(channel: ChannelName, externalId: string, text: string | null): Promise<boolean> {
    const seen = await this.deps.models.InboundEvent.findOne({ where: { channel, external_id: externalId } });
    if (!seen?.session_id || !seen.message_id) return false;
    return this.deps.turns.changeWaiting(seen.session_id, seen.message_id, text);
  }

  /** The session of a chat conversation (`<channel>::<conversation>`), created on its first message, and its contact. */
  private async chatSession(message: InboundMessage) {
    const { models } = this.deps;
    const key = message.sessionKey;
    if (!key || !key.startsWith(`${message.channel}::`)) throw new Error(`a ${message.channel} message needs a session key "${message.channel}::…"`);
    // A new conversation may continue another session (a reply in the thread an event's answer started).
    // A reply to an event's answer (Telegram) continues the event's session, when that answer registered its key.
    const replied = message.continues ? await models.SessionAlias.findOne({ where: { session_key: message.continues } }) : null;
    const replyTarget = replied ? await models.Session.findOne({ where: { id: replied.session_id } }) : null;
    if (replyTarget) return replyTarget;
    const existing = await models.Session.findOne({ where: { session_key: key } });
    const continued = existing ? null : await models.SessionAlias.findOne({ where: { session_key: key } });
    const aliased = continued ? await models.Session.findOne({ where: { id: continued.session_id } }) : null;
    if (aliased) return aliased;
    const [session] = existing
      ? [existing]
      : await findOrInsert(
          models.Session,
          { session_key: key },
          {
            id: randomUUID(),
            name: `${message.channel}: ${message.sender.displayName ?? key.slice(message.channel.length + 2)}`.slice(0, 200),
            owner_id: message.sender.userId,
            channel: message.channel,
            session_key: key,
            active_workflow_id: null,
            config: {},
            active_tools: isAnonymousChannel(message.channel, this.deps.channels ?? []) ? [] : [...this.deps.defaultTools],
            current_turn_id: null,
            turn_phase: null,
            archived_at: null,
            tool_state: null,
          },
        );
    const [contact, created] = await findOrInsert(
      models.Contact,
      { session_key: key },
      { session_key: key, display_name: message.sender.displayName ?? null, tags: message.sender.tags ?? [], workflow_id: null },
    );
    if (!created && message.sender.displayName && contact.display_name !== message.sender.displayName) {
      await contact.update({ display_name: message.sender.displayName });
    }
    return session;
  }

  cancelTurn(sessionId: string): Promise<void> {
    return this.deps.turns.cancel(sessionId);
  }

  async confirmTool(sessionId: string, confirmationId: string, action: string, actor?: Actor, groups?: ApproverGroups): Promise<ConfirmResult | void> {
    const live = await this.deps.registry.get(sessionId);
    const pending = live?.pending?.confirmation_id === confirmationId ? live.pending : null;
    // An approval policy governs the tool: the click is a vote (it may also come while a restarted
    // worker has not asked again yet: the approval is in the database).
    if (this.deps.approvals && (pending === null || pending.approval)) return this.vote(sessionId, confirmationId, action, actor, groups);
    // Only the confirmation the turn waits for: a stale or made-up id is refused, never guessed.
    if (!pending) {
      throw new AppError('INVALID_MESSAGE', `No tool confirmation ${confirmationId} is pending.`);
    }
    await this.deps.control.publish({ kind: 'tool_confirm', sessionId, confirmationId, action, ...(actor ? { actor } : {}) });
  }

  private async vote(sessionId: string, approvalId: string, action: string, actor: Actor | undefined, groups?: ApproverGroups): Promise<ConfirmResult> {
    try {
      if (!actor) throw new AppError('FORBIDDEN', 'Approvals need to know who clicked; this channel does not say.');
      return await this.deps.approvals!.click(approvalId, action, actor, groups, sessionId);
    } catch (error) {
      // Not an approval of this session, or no longer pending: as stale as any other confirmation.
      if (error instanceof AppError && (error.code === 'APPROVAL_NOT_FOUND' || error.code === 'CONFLICT')) {
        throw new AppError('INVALID_MESSAGE', `No tool confirmation ${approvalId} is pending.`);
      }
      throw error;
    }
  }

  async findSession(sessionId: string): Promise<SessionSummary | null> {
    const [row, live] = await Promise.all([this.deps.store.findSession(sessionId), this.deps.registry.get(sessionId).then(runningTurn)]);
    if (!row) return null;
    return {
      id: row.id,
      ownerId: row.owner_id,
      archived: row.archived_at !== null,
      state: live?.state ?? 'idle',
      turnId: live?.turnId ?? null,
      pendingConfirmation: live?.pending ?? null,
    };
  }

  /** On connect (decisions.md §5): the current state, then a confirmation still waiting that the replay did not include. */
  async announceSession(sessionId: string, seen: readonly SessionFrame[]): Promise<void> {
    const live = runningTurn(await this.deps.registry.get(sessionId));
    const turn = live?.turnId ? { turn_id: live.turnId } : {};
    const payload = live?.turnId ? { state: live.state, turn_id: live.turnId } : statePayload(live?.state ?? 'idle');
    await this.events.append(sessionId, { type: 'agent_state', payload });
    const pending = live?.pending ?? null;
    if (pending && !seen.some((frame) => frame.type === 'tool_confirm_request' && frame.payload.confirmation_id === pending.confirmation_id)) {
      await this.events.append(sessionId, { type: 'tool_confirm_request', payload: { ...pending, ...turn } });
    }
  }

  async answerClient(sessionId: string, answer: ClientAnswer): Promise<void> {
    if (answer.type === 'pong') await this.events.append(sessionId, { type: 'pong', payload: {} });
    else await this.events.append(sessionId, { type: 'error', payload: { code: answer.code, message: answer.message } });
  }
}

/**
 * `{state}` payloads of on-connect frames without a turn, one frozen object per state: the event log
 * keeps each on-connect frame for replay, so every idle socket would otherwise hold a copy.
 */
const STATE_PAYLOADS = new Map<AgentState, { readonly state: AgentState }>();
function statePayload(state: AgentState): { readonly state: AgentState } {
  let payload = STATE_PAYLOADS.get(state);
  if (!payload) STATE_PAYLOADS.set(state, (payload = Object.freeze({ state })));
  return payload;
}

/** Whose message it is, as usage counts it: the chat contact (`slack:U123`), else the user account. */
export function senderKey(message: InboundMessage): string {
  return message.sender.contactId ? `${message.channel}:${message.sender.contactId}` : message.sender.userId;
}

/**
 * How long an event id may stay claimed with no stored message before a retry takes it over: far
 * longer than taking a message in takes, even with Redis or the database slow to answer.
 */
export const ABANDONED_CLAIM_MS = 15_000;

function duplicate(sessionId: string, userMessageId: string): Ingested {
  return { sessionId, userMessageId, duplicate: true, disposition: 'duplicate', createdAt: null };
}
