/**
 * A chat's rendering lease (issue 25): the turns of one chat run one after the other, but each is
 * shown by whichever API process follows it, with that process's own send budget. So that a chat
 * shows the answers in the order the turns ran, the process showing a turn holds the chat's lease
 * from the turn's first frame to its last send, and the one showing the next turn waits for it
 * (capped: `RENDER_LEASE.maxWaitMs`) before its first send.
 *
 * Two drivers (src/events/): in-process (one API process, no Redis) and Redis (a short-lived key per
 * chat, renewed while held, deleted on release, and expiring on its own when its process died).
 * `test/contract/render-lease.test.ts` runs the same cases on both.
 *
 * @example
 * const held = await leases.acquire(sessionId, turnId, firstFrame.seq);   // waits for the chat's previous turn
 * try { await sendTheAnswer(); } finally { await held.release(); }
 */
export interface RenderLeases {
  /**
   * Waits until the chat's lease is free and no turn with a lower `ticket` waits for it (or
   * `RENDER_LEASE.maxWaitMs` passed: then it goes ahead without it, `held.waitedOut` set), and takes
   * it for `holder`. `ticket` is the turn's place in the chat: the seq of its first frame (a later
   * turn's frames come after an earlier turn's), so when several turns wait while the previous one
   * still sends, they go in the order they ran, not in the order their processes asked. Never
   * throws: a lease store that fails (Redis down) must not stop an answer, so it then goes ahead too.
   */
  acquire(chat: string, holder: string, ticket: number): Promise<HeldLease>;
}

/** A taken lease. Renewed while held (a long turn outlives the key's time to live), until released. */
export interface HeldLease {
  /** The wait ran out (or the store failed): the answer goes out without the lease. */
  readonly waitedOut: boolean;
  /** Frees the chat for its next turn (once; later calls do nothing). */
  release(): Promise<void>;
}

/** The lease's limits. */
export const RENDER_LEASE = {
  /**
   * Longest a turn's first send waits for the chat's previous turn to finish sending. A previous
   * turn's last sends can wait for send slots and a 429's Retry-After (Telegram's longest honoured
   * is 30 s); past this, order gives way to showing the answer at all.
   */
  maxWaitMs: 30_000,
  /** Time to live of a held lease's key: a process that died holding it frees the chat after this. */
  ttlMs: 10_000,
  /** A held lease is renewed this often (well within `ttlMs`). */
  renewMs: 3_000,
  /** How often a waiting turn asks again whether the lease is free (Redis driver). */
  pollMs: 50,
} as const;

/** A lease that was never taken (no lease store, or the wait ran out). */
export const NO_LEASE: HeldLease = { waitedOut: true, release: async () => undefined };
