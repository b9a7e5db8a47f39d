import type { Logger } from '../logs/logger';
import type { ConfirmAnswer, ConfirmationWaiters } from './turn-context';

/**
 * The confirmations this worker's turns wait for, by id: a `tool_confirm` from the control bus
 * answers one; when answers may have been lost (the bus's connection dropped), each is asked again.
 */
export class PendingConfirmations implements ConfirmationWaiters {
  private readonly waiting = new Map<string, { resolve: (answer: ConfirmAnswer) => void; askAgain?: () => Promise<void> }>();

  wait(confirmationId: string, askAgain?: () => Promise<void>) {
    let resolve!: (answer: ConfirmAnswer) => void;
    const answer = new Promise<ConfirmAnswer>((settle) => (resolve = settle));
    this.waiting.set(confirmationId, { resolve, askAgain });
    return { answer, release: () => this.waiting.delete(confirmationId) };
  }

  /** The answer to one of them (ignored when none here waits for it: another worker's turn asked). */
  answer(confirmationId: string, answer: ConfirmAnswer): void {
    this.waiting.get(confirmationId)?.resolve(answer);
  }

  /** Something about one of them changed elsewhere (an approval counted a click): it reads it again. */
  nudge(confirmationId: string, logger: Logger): void {
    void this.waiting
      .get(confirmationId)
      ?.askAgain?.()
      .catch((error: unknown) => logger.warn({ err: error }, 'could not read an approval again'));
  }

  /** The control bus was cut off for a while: answers sent meanwhile never came, so every waiting question is asked again. */
  askAgain(logger: Logger): void {
    for (const waiter of this.waiting.values()) {
      void waiter.askAgain?.().catch((error: unknown) => logger.warn({ err: error }, 'could not ask a confirmation again'));
    }
  }
}
