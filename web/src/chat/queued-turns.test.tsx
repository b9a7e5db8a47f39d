import { cleanup, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import type { SessionFrame } from '../../../src/protocol/frames';
import type { Message } from '../api/types';
import { emptyTranscript, transcriptReducer, type Transcript, type TranscriptAction } from './transcript';
import { TranscriptView } from './transcript-view';

/**
 * Messages that queued while a turn ran (a chat channel's mid-turn `queue` or `collect`, the session
 * open in the Web UI), shown after a reload from the history and the replayed frames: every question
 * and every reply once, each reply under its question, and the waiting ones as "Queued" (issue 33).
 */

let seq = 0;
const frame = (body: Omit<SessionFrame, 'seq' | 'session_id' | 'ts'>): TranscriptAction => ({
  type: 'frame',
  frame: { ...body, seq: (seq += 1), session_id: 's', ts: new Date().toISOString() } as SessionFrame,
  replayed: true,
});
const historyOf = (...messages: Message[]): TranscriptAction => ({ type: 'history', messages });
const run = (actions: TranscriptAction[], from: Transcript = emptyTranscript) => actions.reduce(transcriptReducer, from);
const base = {
  session_id: 's',
  tool_calls: [],
  token_counts: { input_tokens: 0, output_tokens: 0, total_tokens: 0 },
  workflow_id: null,
  workflow: null,
  routing_reason: null,
};
const question = (id: string, status: 'answered' | 'waiting', turnId = id): Message => ({
  ...base,
  id,
  role: 'user',
  content: `question ${id}`,
  turn_id: turnId,
  status,
  reply_to: null,
  created_at: '2026-01-01T00:00:00.000Z',
});
const reply = (id: string, replyTo: string, content: string): Message => ({
  ...base,
  id,
  role: 'assistant',
  content,
  turn_id: null,
  reply_to: replyTo,
  status: null,
  created_at: '2026-01-01T00:00:01.000Z',
});
/** A whole turn as the replay buffer sends it again. */
const turn = (turnId: string, text: string, replyId: string | null, answers?: string[]): TranscriptAction[] => [
  frame({ type: 'agent_state', payload: { state: 'thinking', turn_id: turnId, ...(answers ? { answers } : {}) } }),
  frame({ type: 'token', payload: { text, final: true, turn_id: turnId } }),
  ...(replyId
    ? [
        frame({
          type: 'done',
          payload: { message_id: replyId, text, total_tokens: 5, input_tokens: 3, output_tokens: 2, duration_ms: 40, tool_calls: 0, turn_id: turnId },
        }),
      ]
    : []),
];

/** The conversation as a reader sees it: who says what, in order, and which questions wait. */
const shown = (state: Transcript) =>
  state.items.map((item) =>
    item.kind === 'user'
      ? `${item.text}${item.queued ? ' (queued)' : ''}`
      : item.kind === 'assistant'
        ? `> ${item.parts.map((part) => (part.kind === 'text' ? part.text : '')).join('')}`
        : `! ${item.text}`,
  );

afterEach(cleanup);

describe('messages queued mid-turn, after a reload', () => {
  it('during the first turn: its reply once, under its question; the two behind it Queued', () => {
    const history = historyOf(question('m1', 'waiting'), question('m2', 'waiting'), question('m3', 'waiting'));
    const state = run([history, ...turn('m1', 'first answer', null)]);
    expect(shown(state)).toEqual(['question m1', '> first answer', 'question m2 (queued)', 'question m3 (queued)']);
    expect(state.running).toBe(true);
  });

  it('after the first turn ended (its reply stored after the queued questions): the reply moves under its question and the replay adds no second bubble', () => {
    // Stored order: the reply of m1 was written after m2 and m3 arrived.
    const history = historyOf(question('m1', 'answered'), question('m2', 'waiting'), question('m3', 'waiting'), reply('r1', 'm1', 'first answer'));
    expect(shown(run([history]))).toEqual(['question m1', '> first answer', 'question m2 (queued)', 'question m3 (queued)']);
    const state = run([history, ...turn('m1', 'first answer', 'r1'), ...turn('m2', 'second answer', null)]);
    expect(shown(state)).toEqual(['question m1', '> first answer', 'question m2', '> second answer', 'question m3 (queued)']);
  });

  it('queue: every turn answered, reloaded again: each question and each reply once, in order', () => {
    const history = historyOf(
      question('m1', 'answered'),
      question('m2', 'answered'),
      question('m3', 'answered'),
      reply('r1', 'm1', 'first answer'),
      reply('r2', 'm2', 'second answer'),
      reply('r3', 'm3', 'third answer'),
    );
    // The replay buffer still holds the last turns: they add nothing.
    const state = run([history, ...turn('m2', 'second answer', 'r2'), ...turn('m3', 'third answer', 'r3')]);
    expect(shown(state)).toEqual(['question m1', '> first answer', 'question m2', '> second answer', 'question m3', '> third answer']);
  });

  it('collect: the waiting questions answered together, the reply once under the last of them', () => {
    const waiting = historyOf(question('m1', 'answered'), question('m2', 'waiting'), question('m3', 'waiting'), reply('r1', 'm1', 'first answer'));
    const live = run([waiting, ...turn('m2', 'both answered', null, ['m3'])]);
    expect(shown(live)).toEqual(['question m1', '> first answer', 'question m2', 'question m3', '> both answered']);
    // Reloaded once the merged turn ended: m3 is filed under m2's turn.
    const after = historyOf(
      question('m1', 'answered'),
      question('m2', 'answered'),
      question('m3', 'answered', 'm2'),
      reply('r1', 'm1', 'first answer'),
      reply('r2', 'm2', 'both answered'),
    );
    const reloaded = run([after, ...turn('m2', 'both answered', 'r2', ['m3'])]);
    expect(shown(reloaded)).toEqual(['question m1', '> first answer', 'question m2', 'question m3', '> both answered']);
  });

  it('shows each bubble once and the waiting ones as Queued in the page', () => {
    const history = historyOf(question('m1', 'waiting'), question('m2', 'waiting'), question('m3', 'waiting'));
    const state = run([history, ...turn('m1', 'first answer', null)]);
    render(<TranscriptView items={state.items} onExample={() => undefined} />);
    expect(screen.getAllByRole('article', { name: 'You' }).map((article) => article.querySelector('.bubble')?.textContent)).toEqual([
      'question m1',
      'question m2',
      'question m3',
    ]);
    expect(screen.getAllByRole('article', { name: 'Agent' })).toHaveLength(1);
    expect(screen.getAllByText(/^Queued/)).toHaveLength(2);
  });
});
