import type { SocketStatus } from './session-socket';

/** The WebSocket's state when it is not simply open: reconnecting, given up, replaced, refused. */
export function ConnectionBanner({ status, onReconnect }: { status: SocketStatus; onReconnect(): void }) {
  switch (status.kind) {
    case 'open':
    case 'closed':
      return null;
    case 'connecting':
      return (
        <div className="banner subtle" role="status">
          Connecting to the live stream…
        </div>
      );
    case 'reconnecting':
      return (
        <div className="banner warning" role="status">
          Connection lost. Reconnecting{status.inMs > 0 ? ` in ${Math.round(status.inMs / 1000)} s` : ''} (attempt {status.attempt} of 10)…
        </div>
      );
    case 'failed':
      return (
        <div className="banner error" role="alert">
          {status.message} Replies will not appear until you reconnect.
          <button type="button" className="btn small" onClick={onReconnect}>
            Reconnect
          </button>
        </div>
      );
    case 'replaced':
      return (
        <div className="banner warning" role="alert">
          This session was opened in another tab or window, which now receives its replies.
          <button type="button" className="btn small" onClick={onReconnect}>
            Use it here
          </button>
        </div>
      );
    case 'ended':
      return (
        <div className="banner error" role="alert">
          {status.message}
        </div>
      );
  }
}
