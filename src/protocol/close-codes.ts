/**
 * How the hub closes a WebSocket (spec, Errors: WebSocket close codes; decisions.md §5, §8), as
 * the server sends them and the clients (CLI, Web UI) tell them apart.
 */
export const CLOSE_CODES = {
  NORMAL: 1000,
  /** A restart or shutdown (reconnect), or a newer connection took the session over (do not). */
  GOING_AWAY: 1001,
  POLICY: 1008,
  /** A client frame over the size limit (1 MiB). */
  TOO_BIG: 1009,
  INTERNAL_ERROR: 1011,
  /** The client does not read fast enough; it reconnects and replays what it missed. */
  TRY_AGAIN_LATER: 1013,
  /** The session registry is not available yet: the server is still starting. */
  SERVER_STARTING: 4000,
  /** Missing, malformed or invalid credential, revoked API key, inactive user; reason `token expired` when only expired. */
  UNAUTHORIZED: 4001,
  /** Valid credential, wrong role or session ownership. */
  FORBIDDEN: 4003,
  /** No such session, or archived. */
  NOT_FOUND: 4004,
} as const;

export type CloseCode = (typeof CLOSE_CODES)[keyof typeof CLOSE_CODES];

/** Close reasons a client acts on (the rest are for people). */
export const CLOSE_REASONS = {
  /** With 4001: the access token expired; refresh it once and reconnect. */
  TOKEN_EXPIRED: 'token expired',
  /**
   * With 1001, after a `session_taken_over` notice (decisions.md §8): a newer connection took the
   * session; reconnecting would take it back. (Hubs before that decision said `replaced by a newer connection`.)
   */
  TAKEN_OVER: 'taken over by another connection',
  /** With 1001: the server stops; reconnect. */
  SHUTTING_DOWN: 'server shutting down',
} as const;

/** True for a 1001 close that hands the session to a newer connection (`taken over…`, or the older `replaced…`). */
export function isTakenOverClose(code: number, reason: string): boolean {
  return code === CLOSE_CODES.GOING_AWAY && /^(taken over|replaced)/i.test(reason);
}
