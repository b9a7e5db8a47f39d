import type { IncomingMessage } from 'node:http';
import { AppError } from '../core/errors';
import type { Hub, SessionSummary, SocketAuthResult } from '../core/hub';
import type { InboundMessage } from '../core/inbound';
import type { Role } from '../core/principal';
import type { ControlBus, EventLog } from '../core/turns';
import type { Models } from '../db/models';
import type { TurnService } from './turn-service';

export interface HubDependencies {
  models: Models;
  turns: TurnService;
  events: EventLog;
  control: ControlBus;
  authenticateSocket(request: IncomingMessage, options: { queryToken: boolean; role?: Role }): Promise<SocketAuthResult>;
  selectProtocol(protocols: Set<string>, request: IncomingMessage): string | false;
  isDraining(): boolean;
}

/** The hub behind the channel adapters' port: storage, queue and event log, one way in. */
export class SwitchboardHub implements Hub {
  readonly events: EventLog;
  readonly control: ControlBus;

  constructor(private readonly deps: HubDependencies) {
    this.events = deps.events;
    this.control = deps.control;
  }

  async ingest(message: InboundMessage): Promise<{ sessionId: string; userMessageId: string }> {
    if (!message.sessionId) throw new Error(`ingest for channel ${message.channel} without a session id is not implemented yet`);
    const session = await this.deps.models.Session.findOne({ where: { id: message.sessionId } });
    if (!session) throw new AppError('SESSION_NOT_FOUND', `No session ${message.sessionId}.`);
    const stored = await this.deps.turns.accept({ session, text: message.text, mode: message.mode, metadata: message.metadata });
    return { sessionId: session.id, userMessageId: stored.id };
  }

  async cancelTurn(sessionId: string): Promise<void> {
    const session = await this.deps.models.Session.findOne({ where: { id: sessionId } });
    if (!session) throw new AppError('SESSION_NOT_FOUND', `No session ${sessionId}.`);
    await this.deps.turns.cancel(session);
  }

  async confirmTool(sessionId: string, confirmationId: string, action: string): Promise<void> {
    const session = await this.deps.models.Session.findOne({ where: { id: sessionId } });
    if (!session) throw new AppError('SESSION_NOT_FOUND', `No session ${sessionId}.`);
    // Only the confirmation the turn waits for: a stale or made-up id is refused, never guessed.
    if (session.pending_confirmation?.confirmation_id !== confirmationId) {
      throw new AppError('INVALID_MESSAGE', `No tool confirmation ${confirmationId} is pending.`);
    }
    await this.deps.control.publish({ kind: 'tool_confirm', sessionId, confirmationId, action });
  }

  async findSession(sessionId: string): Promise<SessionSummary | null> {
    const row = await this.deps.models.Session.findOne({ where: { id: sessionId } });
    if (!row) return null;
    const pending = row.pending_confirmation;
    return {
      id: row.id,
      ownerId: row.owner_id,
      archived: row.archived_at !== null,
      state: row.state,
      pendingConfirmation: pending
        ? { confirmation_id: pending.confirmation_id, tool: pending.tool, parameters: pending.parameters, message: pending.message }
        : null,
    };
  }

  authenticateSocket(request: IncomingMessage, options: { queryToken: boolean; role?: Role }): Promise<SocketAuthResult> {
    return this.deps.authenticateSocket(request, options);
  }

  selectProtocol(protocols: Set<string>, request: IncomingMessage): string | false {
    return this.deps.selectProtocol(protocols, request);
  }

  isDraining(): boolean {
    return this.deps.isDraining();
  }
}
