/** Where the turn's replies go. */
export interface ReplyTarget {
  channel: string;
  /** The thread to answer in; null answers at the top level (a DM outside a thread). */
  threadTs: string | null;
  /** Who asked, in which workspace: Slack wants them to stream outside a DM. */
  recipient: { userId: string; teamId: string };
}
