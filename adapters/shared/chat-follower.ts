import type { Logger } from 'pino';
import { isAppError, type AppError } from '../../src/core/errors';
import { followTurn, type FollowedTurn } from '../../src/core/follow-turn';
import type { Hub, Ingested } from '../../src/core/hub';
import type { InboundMessage } from '../../src/core/inbound';
import type { RenderLeases } from '../../src/core/render-lease';
import type { ChannelTelemetry } from '../../src/core/telemetry';
import { answerWatch } from './answer-watch';
import type { ReplySurface } from './reply-surface';
import { TurnPresenter } from './turn-presenter';

/** Limits of following a turn, the same for every chat channel. */
export const FOLLOW_LIMITS = {
  /** A turn still silent after this long is given up (its listener released); the worker's own limits end turns sooner. */
  silentTurnMs: 30 * 60 * 1000,
} as const;

export interface ChatFollowerOptions {
  /** The channel's name, for the logs. */
  channel: string;
  logger: Logger;
  telemetry?: ChannelTelemetry;
  /** The chats' rendering leases (ChannelContext.renderLeases): a chat's turns are shown in order across processes. */
  leases?: RenderLeases;
  /** At shutdown, replies still being sent get this long before the channel gives up their waits. */
  shutdownGraceMs: number;
  silentTurnMs?: number;
}

/** How a channel answers a refusal of its own (the widget: a closed session gets a new one); true when it did. */
export type RefusalHandler = (error: AppError) => boolean;

/**
 * "Take a message in and follow its turn", written once for every chat channel: the ingest's refusals
 * (TURN_IN_PROGRESS → the busy note; any other 4xx → the apology; a 5xx or an unknown failure is
 * thrown, so the platform delivers again), duplicates (a platform retry: nothing), the waiting mark
 * on a message queued behind the running turn, following the turn by its id (frames the log kept
 * from before included), the first-answer telemetry, the silent-turn timeout, and shutdown.
 */
export class ChatFollower {
  private readonly following = new Set<{ sessionId: string; followed: FollowedTurn; presenter: TurnPresenter }>();
  private readonly pending = new Set<Promise<void>>();

  constructor(private readonly options: ChatFollowerOptions) {}

  /**
   * Takes `message` in and presents its turn on `surface`. Resolves once the hub took it in (the
   * answer follows on its own): with what the hub did, or null when it was refused and the chat told so.
   */
  async take(hub: Hub, message: InboundMessage, surface: ReplySurface, onRefused?: RefusalHandler): Promise<Ingested | null> {
    let result: Ingested;
    try {
      result = await hub.ingest(message);
    } catch (error) {
      // Not stored (queue or database down): thrown, so the platform delivers again (the hub freed the event id).
      if (!isAppError(error) || error.status >= 500) throw error;
      if (onRefused?.(error)) return null;
      if (error.code !== 'TURN_IN_PROGRESS')
        this.options.logger.warn({ err: error, session_key: message.sessionKey }, `${this.options.channel}: a message was refused`);
      const { busy, apology } = surface.cadence.texts;
      this.notify(surface, error.code === 'TURN_IN_PROGRESS' ? busy : apology);
      return null;
    }
    if (result.duplicate) return result; // a platform's retry of a message already taken in: no second turn, no second reply
    await this.follow(hub, result.sessionId, result.userMessageId, surface, result.disposition === 'queued');
    return result;
  }

  /** Presents turn `turnId` on `surface`; `waiting`: its message waits behind the running turn (marked until its turn starts). */
  async follow(hub: Hub, sessionId: string, turnId: string, surface: ReplySurface, waiting = false): Promise<void> {
    const { leases, logger, channel } = this.options;
    const presenter = new TurnPresenter(surface, {
      logger,
      channel,
      sessionId,
      turnId,
      lease: leases ? (ticket) => leases.acquire(sessionId, turnId, ticket) : undefined,
    });
    const unmark = this.mark(surface, waiting);
    const answered = answerWatch(this.options.telemetry, turnId);
    const followed = await followTurn(hub.events, sessionId, turnId, {
      replay: true,
      onFrame: (frame) => {
        unmark();
        answered(frame);
        presenter.frame(frame);
      },
    });
    void followed.outcome.then(unmark);
    const entry = { sessionId, followed, presenter };
    this.following.add(entry);
    const silent = setTimeout(() => {
      logger.warn({ session_id: sessionId, turn_id: turnId }, `${channel}: a turn went silent; no longer showing it`);
      followed.stop();
    }, this.options.silentTurnMs ?? FOLLOW_LIMITS.silentTurnMs);
    silent.unref();
    this.track(
      followed.outcome
        .then((outcome) => presenter.end(outcome))
        .finally(() => {
          clearTimeout(silent);
          this.following.delete(entry);
        }),
    );
  }

  /** Whether a turn of `sessionId` is still being shown here. */
  isFollowing(sessionId: string): boolean {
    for (const entry of this.following) if (entry.sessionId === sessionId) return true;
    return false;
  }

  /** Sends a note to the sender (privately where the surface can), not awaited: it may wait for a send slot. */
  notify(surface: ReplySurface, text: string): void {
    this.track(surface.notice ? surface.notice(text) : surface.post(text, { first: true }));
  }

  /**
   * Stops following every turn; replies already on their way get `shutdownGraceMs`, then
   * `abandonWaits` gives up their waits for a send slot (the answers stay in the session history).
   */
  async stop(abandonWaits: () => void): Promise<void> {
    for (const { followed } of [...this.following]) followed.stop();
    this.following.clear();
    const all = Promise.allSettled([...this.pending]);
    let grace: NodeJS.Timeout | undefined;
    await Promise.race([all, new Promise((resolve) => (grace = setTimeout(resolve, this.options.shutdownGraceMs)))]);
    clearTimeout(grace);
    abandonWaits();
    await all;
  }

  /** The waiting mark on a queued message: set now, cleared once (its turn's first frame, or its end). */
  private mark(surface: ReplySurface, waiting: boolean): () => void {
    if (!waiting || !surface.react) return () => undefined;
    const react = surface.react.bind(surface);
    this.track(react(true));
    let marked = true;
    return () => {
      if (!marked) return;
      marked = false;
      this.track(react(false));
    };
  }

  private track(work: Promise<void>): void {
    const tracked = work.catch((error: unknown) => this.options.logger.error({ err: error }, `${this.options.channel}: a platform call failed`));
    this.pending.add(tracked);
    void tracked.finally(() => this.pending.delete(tracked));
  }
}
