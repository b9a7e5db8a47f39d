import { CLOSE_CODES, CLOSE_REASONS, isTakenOverClose } from '../../protocol/close-codes';

/** What a client does when the hub closes a socket or refuses to open one. */
export type CloseVerdict =
  /** A passing problem (restart, shutdown, network, overload): try again per the reconnect policy. */
  | { kind: 'retry'; why: string }
  /** The access token expired: refresh the stored login once, then reconnect at once. */
  | { kind: 'refresh' }
  /** Reconnecting cannot help; `why` is for people. */
  | { kind: 'stop'; why: string };

/** The wording for refusals that depend on what was opened (a session, the log stream). */
export interface RefusalWording {
  forbidden: string;
  notFound: string;
}

/** Why a client must not reconnect after a takeover (the notice, or the close reason). */
export const TAKEN_OVER_WHY = 'another client connected to this session (a session streams to one connection at a time)';

/**
 * Decides what a close means. A 1001 is a restart (reconnect) unless this connection was taken
 * over by a newer one for the same session (decisions.md §8: the reason says so, after a
 * `session_taken_over` notice), where reconnecting would take the session back from it. Hubs
 * before that decision said "replaced by a newer connection".
 */
export function classifyClose(code: number, reason: string, wording: RefusalWording): CloseVerdict {
  switch (code) {
    case CLOSE_CODES.UNAUTHORIZED:
      return reason === CLOSE_REASONS.TOKEN_EXPIRED
        ? { kind: 'refresh' }
        : { kind: 'stop', why: 'the hub did not accept the credential (closed 4001 unauthorized)' };
    case CLOSE_CODES.FORBIDDEN:
      return { kind: 'stop', why: wording.forbidden };
    case CLOSE_CODES.NOT_FOUND:
      return { kind: 'stop', why: wording.notFound };
    case CLOSE_CODES.POLICY:
    case CLOSE_CODES.TOO_BIG:
      return { kind: 'stop', why: `the hub closed the connection (${code}${reason ? ` ${reason}` : ''})` };
    case CLOSE_CODES.GOING_AWAY:
      if (isTakenOverClose(code, reason)) return { kind: 'stop', why: TAKEN_OVER_WHY };
      return { kind: 'retry', why: reason || 'the hub is going away' };
    default:
      return { kind: 'retry', why: `closed ${code}${reason ? ` ${reason}` : ''}` };
  }
}
