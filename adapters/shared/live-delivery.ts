import type { Logger } from 'pino';
import type { DeliveryReceipt, LiveDelivery, LiveDeliveryRequest } from '../../src/core/delivery';
import type { TurnOutcome } from '../../src/core/follow-turn';
import type { ReplySurface } from './reply-surface';
import { TurnPresenter } from './turn-presenter';

/**
 * The first message a delivery's surface put in the chat: the channel's send calls report each
 * message id they got, and wait; the first is the receipt (told to the deliverer, and recorded,
 * before the surface edits or sends anything else).
 */
export class FirstMessage {
  private receipt: DeliveryReceipt | null = null;

  constructor(
    private readonly request: Pick<LiveDeliveryRequest, 'onPosted'>,
    private readonly receiptOf: (messageId: string) => DeliveryReceipt,
  ) {}

  /** Resolves once the first message's id is recorded (at once for any later message). */
  async seen(messageId: string | number | null | undefined): Promise<void> {
    if (this.receipt || messageId === null || messageId === undefined || messageId === '') return;
    this.receipt = this.receiptOf(String(messageId));
    await this.request.onPosted(this.receipt);
  }

  get(): DeliveryReceipt | null {
    return this.receipt;
  }
}

/**
 * An event's turn presented in its delivery chat (issue 29) with the channel's own presenter —
 * native streaming, edits or posts at the channel's cadence, confirmations with its buttons — the
 * one difference being the failure note, which names the event ("The deploys hook turn failed:
 * PROVIDER_ERROR") instead of the channel's apology.
 */
export function presentDelivery(
  surface: ReplySurface,
  request: LiveDeliveryRequest,
  first: FirstMessage,
  context: { logger: Logger; channel: string },
): LiveDelivery {
  const texts = { ...surface.cadence.texts };
  const shown: ReplySurface = { ...surface, cadence: { ...surface.cadence, texts } };
  const presenter = new TurnPresenter(shown, { logger: context.logger, channel: context.channel, sessionId: request.sessionId, turnId: request.turnId });
  return {
    frame: (frame) => presenter.frame(frame),
    end: async (outcome: TurnOutcome) => {
      let ending = outcome;
      if (outcome.kind === 'cancelled') texts.cancelled = request.failureNote(outcome);
      if (outcome.kind === 'error') {
        const note = request.failureNote(outcome);
        texts.apology = note;
        ending = { ...outcome, message: note };
      }
      await presenter.end(ending);
      return first.get();
    },
  };
}
