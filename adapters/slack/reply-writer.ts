/** Where the turn's replies go. */
export interface ReplyTarget {
  channel: string;
  /** The thread to answer in; null answers at the top level (a DM outside a thread). */
  threadTs: string | null;
  /** Who asked, in which workspace: Slack wants them to stream outside a DM. */
  recipient: { userId: string; teamId: string };
}

/** One way of putting a turn's answer in Slack: a native stream, or a message edited as it grows. */
export interface ReplyWriter {
  readonly kind: 'stream' | 'edit';
  /** The turn started: show that it is working (the edit path posts a placeholder). */
  begin(): Promise<void>;
  /** The answer so far (the whole text): shown if a send slot is free; false when skipped for lack of one. */
  interim(text: string): Promise<boolean>;
  /** The whole final text (the answer, an apology, a note): always lands. */
  final(text: string): Promise<void>;
}

/** Native streaming is not available for this reply: it goes the edit way instead. */
export class StreamUnavailable extends Error {
  constructor(
    readonly reason: string,
    /** Slack refused the method for the workspace (remembered), rather than failing this once. */
    readonly refused: boolean,
  ) {
    super(`native streaming unavailable: ${reason}`);
  }
}
