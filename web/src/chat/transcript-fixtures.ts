import type { SessionFrame } from '../../../src/protocol/frames';
import type { Message } from '../api/types';
import { emptyTranscript, transcriptReducer, type Transcript, type TranscriptAction } from './transcript';

/** Test fixtures for the transcript reducer: frames numbered in order, stored messages, a run of actions. */
let seq = 0;

export const frame = (body: Omit<SessionFrame, 'seq' | 'session_id' | 'ts'>): TranscriptAction => ({
  type: 'frame',
  frame: { ...body, seq: (seq += 1), session_id: 's', ts: new Date().toISOString() } as SessionFrame,
});

export const message = (id: string, role: Message['role'], content: string, extra: Partial<Message> = {}): Message => ({
  id,
  session_id: 's',
  role,
  content,
  tool_calls: [],
  token_counts: { input_tokens: 0, output_tokens: 0, total_tokens: 0 },
  workflow_id: null,
  workflow: null,
  routing_reason: null,
  created_at: '2026-01-01T00:00:00.000Z',
  ...extra,
});

export const run = (actions: TranscriptAction[], from: Transcript = emptyTranscript) => actions.reduce(transcriptReducer, from);
