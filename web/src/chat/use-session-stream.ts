import { useCallback, useEffect, useReducer, useRef, useState } from 'react';
import { accessToken, api, errorMessage, refreshTokens } from '../api/client';
import type { ConfirmAction } from '../../../src/protocol/confirm-actions';
import type { SessionFrame } from '../../../src/protocol/frames';
import type { Message, Page } from '../api/types';
import { SessionSocket, type SocketStatus } from './session-socket';
import { emptyTranscript, transcriptReducer } from './transcript';

/** Most history pages fetched for one view (100 messages each). */
const MAX_HISTORY_PAGES = 20;

async function fetchHistory(sessionId: string, signal?: AbortSignal): Promise<Message[]> {
  const messages: Message[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < MAX_HISTORY_PAGES; page += 1) {
    const query = new URLSearchParams({ limit: '100' });
    if (cursor) query.set('cursor', cursor);
    const result: Page<Message> = await api.get<Page<Message>>(`/sessions/${sessionId}/messages?${query}`, signal);
    messages.push(...result.items);
    if (!result.has_more || !result.next_cursor) break;
    cursor = result.next_cursor;
  }
  return messages;
}

/**
 * A session's live conversation: history over REST, then the WebSocket stream (replay from the
 * start of the buffer on page load, so a reload mid-turn resumes), history again after every
 * reconnect to fill gaps.
 */
export function useSessionStream(sessionId: string) {
  const [transcript, dispatch] = useReducer(transcriptReducer, emptyTranscript);
  const [status, setStatus] = useState<SocketStatus>({ kind: 'connecting' });
  const [historyError, setHistoryError] = useState<string | null>(null);
  const socketRef = useRef<SessionSocket | null>(null);

  const loadHistory = useCallback(async () => {
    try {
      dispatch({ type: 'history', messages: await fetchHistory(sessionId) });
      setHistoryError(null);
    } catch (error) {
      setHistoryError(errorMessage(error));
    }
  }, [sessionId]);

  useEffect(() => {
    let disposed = false;
    const socket = new SessionSocket({
      sessionId,
      token: accessToken,
      refresh: refreshTokens,
      onFrame: (frame: SessionFrame, replayed: boolean) => dispatch({ type: 'frame', frame, replayed }),
      onStatus: (next) => !disposed && setStatus(next),
      onReconnected: () => void loadHistory(),
    });
    socketRef.current = socket;
    // History first, so frames replayed on connect are matched against stored replies.
    void loadHistory().then(() => !disposed && socket.start());
    return () => {
      disposed = true;
      socket.close();
      socketRef.current = null;
    };
  }, [sessionId, loadHistory]);

  const answerConfirm = useCallback((confirmationId: string, action: ConfirmAction) => {
    const sent = socketRef.current?.send({ type: 'tool_confirm', payload: { confirmation_id: confirmationId, action } }) ?? false;
    if (sent) dispatch({ type: 'confirm_answered' });
    else dispatch({ type: 'notice', tone: 'error', text: 'Not connected: the answer was not sent. It will be asked again when the connection is back.' });
  }, []);

  const cancel = useCallback(async () => {
    if (socketRef.current?.send({ type: 'cancel', payload: {} })) return;
    try {
      await api.post(`/sessions/${sessionId}/cancel`);
    } catch (error) {
      dispatch({ type: 'notice', tone: 'error', text: errorMessage(error) });
    }
  }, [sessionId]);

  return {
    transcript,
    dispatch,
    status,
    historyError,
    reloadHistory: loadHistory,
    answerConfirm,
    cancel,
    reconnect: () => socketRef.current?.reconnectNow(),
  };
}
