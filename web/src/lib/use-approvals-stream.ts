import { useEffect, useRef, useState } from 'react';
import { accessToken } from '../api/client';
import { socketOrigin } from '../api/origin';
import { reconnectDelay } from '../chat/reconnect-policy';

const PING_INTERVAL_MS = 30_000;

/** Whether the page hears changes as they happen, is (re)connecting, or gave up (then it reads on demand). */
export type StreamStatus = 'connecting' | 'live' | 'offline';

/**
 * The approvals doorbell (`/ws/v1/approvals`, issue 30): `onChange` runs when any approval is
 * opened, counted or decided anywhere, and after each (re)connect (changes may have been missed);
 * the caller reads `GET /approvals` again. Reconnects with the spec's backoff.
 */
export function useApprovalsStream(onChange: () => void): StreamStatus {
  const [status, setStatus] = useState<StreamStatus>('connecting');
  const latest = useRef(onChange);
  latest.current = onChange;

  useEffect(() => {
    let socket: WebSocket | null = null;
    let ping: ReturnType<typeof setInterval> | undefined;
    let retry: ReturnType<typeof setTimeout> | undefined;
    let failures = 0;
    let disposed = false;
    const connect = async () => {
      const token = await accessToken();
      if (disposed) return;
      if (!token) return setStatus('offline');
      socket = new WebSocket(`${socketOrigin()}/ws/v1/approvals`, ['bearer', token]);
      socket.onmessage = (event) => {
        const frame = JSON.parse(String(event.data)) as { type?: string };
        if (frame.type === 'approvals_ready') {
          failures = 0;
          setStatus('live');
          ping = setInterval(() => socket?.readyState === WebSocket.OPEN && socket.send('ping'), PING_INTERVAL_MS);
        }
        if (frame.type === 'approvals_ready' || frame.type === 'approvals_changed') latest.current();
      };
      socket.onclose = (event) => {
        clearInterval(ping);
        if (disposed) return;
        const delay = event.code === 4001 ? null : reconnectDelay((failures += 1));
        setStatus(delay === null ? 'offline' : 'connecting');
        if (delay !== null) retry = setTimeout(() => void connect(), delay);
      };
    };
    void connect();
    return () => {
      disposed = true;
      clearInterval(ping);
      clearTimeout(retry);
      socket?.close(1000);
    };
  }, []);
  return status;
}
