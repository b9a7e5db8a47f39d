import { useEffect, useMemo, useRef, useState } from 'react';
import { accessToken } from '../api/client';
import { socketOrigin } from '../api/origin';
import { STREAM_LEVELS as LEVELS, type LogLine, type LogStreamFrame, type StreamLevel as Level } from '../../../src/protocol/log-lines';
import { ErrorNote } from '../components/ui';
/** Lines kept in the view; older ones scroll away. */
const MAX_LINES = 1_000;
const PING_INTERVAL_MS = 30_000;

type StreamState = { kind: 'connecting' } | { kind: 'live' } | { kind: 'closed'; message: string };

/** The admin log stream (`/ws/v1/logs`): a minimum level, pause, and a search over what arrived. */
export function LogViewer() {
  const [level, setLevel] = useState<Level>('INFO');
  const [lines, setLines] = useState<(LogLine & { id: number })[]>([]);
  const [paused, setPaused] = useState(false);
  const [held, setHeld] = useState<(LogLine & { id: number })[]>([]);
  const [search, setSearch] = useState('');
  const [state, setState] = useState<StreamState>({ kind: 'connecting' });
  const [attempt, setAttempt] = useState(0);
  const pausedRef = useRef(paused);
  pausedRef.current = paused;
  const counter = useRef(0);
  const listRef = useRef<HTMLOListElement>(null);

  useEffect(() => {
    let socket: WebSocket | null = null;
    let ping: ReturnType<typeof setInterval> | undefined;
    let disposed = false;
    setState({ kind: 'connecting' });
    void accessToken().then((token) => {
      if (disposed) return;
      if (!token) return setState({ kind: 'closed', message: 'Signed out.' });
      socket = new WebSocket(`${socketOrigin()}/ws/v1/logs?level=${level}`, ['bearer', token]);
      socket.onopen = () => {
        setState({ kind: 'live' });
        ping = setInterval(() => socket?.readyState === WebSocket.OPEN && socket.send('ping'), PING_INTERVAL_MS);
      };
      socket.onmessage = (event) => {
        const line = JSON.parse(String(event.data)) as LogStreamFrame;
        if (line.type !== 'log_line') return;
        const entry = { ...line, id: (counter.current += 1) };
        if (pausedRef.current) setHeld((current) => [...current, entry].slice(-MAX_LINES));
        else setLines((current) => [...current, entry].slice(-MAX_LINES));
      };
      socket.onclose = (event) => {
        clearInterval(ping);
        if (disposed) return;
        const message =
          event.code === 4001
            ? 'Your sign-in has ended.'
            : event.code === 4003
              ? 'Administrators only.'
              : `The log stream closed (${event.code}${event.reason ? `: ${event.reason}` : ''}).`;
        setState({ kind: 'closed', message });
      };
    });
    return () => {
      disposed = true;
      clearInterval(ping);
      socket?.close(1000);
    };
  }, [level, attempt]);

  useEffect(() => {
    const list = listRef.current;
    if (list && !paused) list.scrollTop = list.scrollHeight;
  }, [lines, paused]);

  const resume = () => {
    setLines((current) => [...current, ...held].slice(-MAX_LINES));
    setHeld([]);
    setPaused(false);
  };

  const shown = useMemo(() => {
    const needle = search.trim().toLowerCase();
    return needle ? lines.filter((line) => `${line.logger} ${line.message}`.toLowerCase().includes(needle)) : lines;
  }, [lines, search]);

  return (
    <section className="card log-viewer" aria-labelledby="logs-title">
      <div className="log-toolbar">
        <h2 id="logs-title">Live logs</h2>
        <span className={`live-dot ${state.kind}`} role="status">
          {state.kind === 'live' ? (paused ? `Paused (${held.length} waiting)` : 'Live') : state.kind === 'connecting' ? 'Connecting…' : 'Disconnected'}
        </span>
        <label className="inline-field">
          <span>Minimum level</span>
          <select value={level} onChange={(event) => setLevel(event.target.value as Level)}>
            {LEVELS.map((value) => (
              <option key={value}>{value}</option>
            ))}
          </select>
        </label>
        <label className="inline-field grow">
          <span className="sr-only">Search logs</span>
          <input type="search" placeholder="Search logs" value={search} onChange={(event) => setSearch(event.target.value)} />
        </label>
        <button type="button" className="btn small" onClick={() => (paused ? resume() : setPaused(true))} aria-pressed={paused}>
          {paused ? 'Resume' : 'Pause'}
        </button>
        <button type="button" className="btn small ghost" onClick={() => setLines([])}>
          Clear
        </button>
      </div>
      {state.kind === 'closed' && <ErrorNote onRetry={() => setAttempt((value) => value + 1)}>{state.message}</ErrorNote>}
      <ol ref={listRef} className="log-lines" role="log" aria-label="Log lines" aria-live="off" tabIndex={0}>
        {shown.length === 0 && (
          <li className="muted empty">
            {lines.length === 0 ? `Waiting for ${level} lines or above… Use the hub (send a message, open a page) to see some.` : 'No line matches the search.'}
          </li>
        )}
        {shown.map((line) => (
          <li key={line.id} className={`level-${line.level.toLowerCase()}`}>
            <time dateTime={line.timestamp}>{line.timestamp.slice(11, 23)}</time>
            <span className="level">{line.level}</span>
            <span className="logger">{line.logger}</span>
            <span className="message">{line.message}</span>
          </li>
        ))}
      </ol>
    </section>
  );
}
