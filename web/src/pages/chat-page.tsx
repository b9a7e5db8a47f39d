import { useEffect, useLayoutEffect, useRef, useState, type FormEvent, type KeyboardEvent } from 'react';
import { Link, useParams } from 'react-router';
import { api, errorMessage } from '../api/client';
import { TURN_MODES, type TurnMode } from '../../../src/protocol/frames';
import type { Message, Session } from '../api/types';
import { AgentStateIndicator } from '../chat/agent-state-indicator';
import { ConnectionBanner } from '../chat/connection-banner';
import { TranscriptView } from '../chat/transcript-view';
import { useSessionStream } from '../chat/use-session-stream';
import { ConfirmDialog } from '../components/confirm-dialog';
import { ErrorNote, Loading } from '../components/ui';
import { useLoad } from '../lib/use-load';

const MODE_LABELS: Record<TurnMode, string> = { normal: 'Normal', think: 'Think', delegate: 'Delegate' };
const MAX_MESSAGE_CHARS = 65_536;

/** One session's conversation, streamed live. */
export function ChatPage() {
  const { id = '' } = useParams();
  const session = useLoad((signal) => api.get<Session>(`/sessions/${id}`, signal), [id]);
  if (session.error) {
    return (
      <div className="chat-page">
        <ErrorNote onRetry={session.reload}>{session.error}</ErrorNote>
        <Link to="/sessions">Back to sessions</Link>
      </div>
    );
  }
  if (!session.data) return <Loading />;
  return <Chat key={id} session={session.data} />;
}

function Chat({ session }: { session: Session }) {
  const stream = useSessionStream(session.id);
  const { transcript } = stream;
  const [draft, setDraft] = useState('');
  const [mode, setMode] = useState<TurnMode>('normal');
  const [sendError, setSendError] = useState<string | null>(null);
  const logRef = useRef<HTMLDivElement>(null);
  const stickToBottom = useRef(true);
  const composer = useRef<HTMLTextAreaElement>(null);

  // Follow the stream while the reader is at the bottom; leave them be when they scrolled up.
  useLayoutEffect(() => {
    const log = logRef.current;
    if (log && stickToBottom.current) log.scrollTop = log.scrollHeight;
  }, [transcript.items]);

  // A banner or the composer changing size must not push the newest line out of view.
  useEffect(() => {
    const log = logRef.current;
    if (!log || typeof ResizeObserver === 'undefined') return;
    const observer = new ResizeObserver(() => {
      if (stickToBottom.current) log.scrollTop = log.scrollHeight;
    });
    observer.observe(log);
    return () => observer.disconnect();
  }, []);

  useEffect(() => {
    document.title = `${session.name} · Switchboard`;
    return () => {
      document.title = 'Switchboard';
    };
  }, [session.name]);

  const send = async (event?: FormEvent) => {
    event?.preventDefault();
    const text = draft.trim();
    if (!text || transcript.running || transcript.waiting) return;
    const localId = `local-${Date.now()}`;
    setSendError(null);
    stickToBottom.current = true;
    stream.dispatch({ type: 'user_sending', localId, text });
    setDraft('');
    try {
      const message = await api.post<Message>(`/sessions/${session.id}/messages`, { text, mode });
      stream.dispatch({ type: 'user_sent', localId, message });
    } catch (error) {
      stream.dispatch({ type: 'user_failed', localId });
      setDraft(text);
      setSendError(errorMessage(error));
    }
  };

  const onComposerKey = (event: KeyboardEvent<HTMLTextAreaElement>) => {
    if (event.key === 'Enter' && !event.shiftKey && !event.nativeEvent.isComposing) {
      event.preventDefault();
      void send();
    }
  };

  const archived = session.archived_at !== null;
  return (
    <div className="chat-page">
      <header className="chat-header">
        <div className="chat-title">
          <Link to="/sessions" className="muted small">
            ← Sessions
          </Link>
          <h1>{session.name}</h1>
        </div>
        <AgentStateIndicator state={transcript.agentState} running={transcript.running} queued={transcript.waiting !== null} />
        <div className="chat-controls">
          <label className="inline-field">
            <span>Mode</span>
            <select value={mode} onChange={(event) => setMode(event.target.value as TurnMode)} aria-describedby="mode-hint">
              {TURN_MODES.map((value) => (
                <option key={value} value={value}>
                  {MODE_LABELS[value]}
                </option>
              ))}
            </select>
          </label>
          <span id="mode-hint" className="sr-only">
            Normal answers directly; Think analyses first; Delegate splits the work among helpers.
          </span>
          <button type="button" className="btn danger" onClick={() => void stream.cancel()} disabled={!transcript.running && !transcript.waiting}>
            Cancel turn
          </button>
        </div>
      </header>
      <ConnectionBanner status={stream.status} onReconnect={stream.reconnect} />
      <ErrorNote onRetry={() => void stream.reloadHistory()}>{stream.historyError && `History could not be loaded: ${stream.historyError}`}</ErrorNote>
      <div
        ref={logRef}
        className="conversation"
        role="log"
        aria-label="Conversation"
        aria-live="polite"
        tabIndex={0}
        onScroll={(event) => {
          const log = event.currentTarget;
          stickToBottom.current = log.scrollHeight - log.scrollTop - log.clientHeight < 80;
        }}
      >
        <TranscriptView
          items={transcript.items}
          onExample={(text) => {
            setDraft(text);
            composer.current?.focus();
          }}
        />
        {transcript.waiting?.reason && (
          <p className="note warning waiting-note" role="status">
            Queued: {transcript.waiting.reason}
          </p>
        )}
        {transcript.approvalWaiting?.approval && (
          <p className="note info waiting-note approval-waiting" role="status">
            <span>
              <code>{transcript.approvalWaiting.tool}</code>: {transcript.approvalWaiting.approval.text}
              {transcript.approvalWaiting.approval.approved_by.length > 0 && ` · approved by ${transcript.approvalWaiting.approval.approved_by.join(', ')}`}
            </span>
          </p>
        )}
      </div>
      <form className="composer" onSubmit={send}>
        <label htmlFor="composer" className="sr-only">
          Message
        </label>
        <textarea
          id="composer"
          ref={composer}
          value={draft}
          onChange={(event) => setDraft(event.target.value)}
          onKeyDown={onComposerKey}
          placeholder={
            archived
              ? 'This session is archived: restore it to continue.'
              : 'Message the agent… (Enter to send, Shift+Enter for a new line, /help for commands)'
          }
          rows={2}
          maxLength={MAX_MESSAGE_CHARS}
          disabled={archived}
          aria-describedby={sendError ? 'send-error' : undefined}
          autoFocus
        />
        <button type="submit" className="btn primary" disabled={!draft.trim() || transcript.running || transcript.waiting !== null || archived}>
          Send
        </button>
      </form>
      {sendError && (
        <p id="send-error" className="field-error composer-error" role="alert">
          {sendError}
        </p>
      )}
      {transcript.confirm && (
        <ConfirmDialog
          key={transcript.confirm.confirmation_id}
          request={transcript.confirm}
          onAnswer={(action) => stream.answerConfirm(transcript.confirm!.confirmation_id, action)}
        />
      )}
    </div>
  );
}
