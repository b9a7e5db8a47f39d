import { describe, expect, it } from 'vitest';
import { type AssistantItem, type TranscriptAction } from './transcript';
import { frame, message, run } from './transcript-fixtures';

const sent: TranscriptAction[] = [
  { type: 'user_sending', localId: 'local-1', text: 'hello' },
  { type: 'user_sent', localId: 'local-1', message: message('t1', 'user', 'hello') },
];
const noWorker = frame({
  type: 'error',
  payload: { code: 'WORKER_UNAVAILABLE', message: 'no worker is running (start one with `npm run worker`)', turn_id: 't1' },
});

describe('a turn no worker has started (issue 33: honest chat states)', () => {
  it('is queued, not Ready, and says why once the hub does; no error is left in the conversation', () => {
    expect(run(sent).waiting).toEqual({ turnId: 't1', reason: null });
    const told = run([...sent, noWorker]);
    expect(told.waiting).toEqual({ turnId: 't1', reason: 'no worker is running (start one with `npm run worker`)' });
    expect(told.items.filter((item) => item.kind === 'notice')).toEqual([]);
  });

  it('stops waiting when the turn starts, and the answer ends with no warning under it', () => {
    const answered = run([
      ...sent,
      noWorker,
      frame({ type: 'agent_state', payload: { state: 'thinking', turn_id: 't1' } }),
      frame({ type: 'token', payload: { text: 'Hi.', final: false, turn_id: 't1' } }),
      frame({
        type: 'done',
        payload: { message_id: 'r1', text: 'Hi.', total_tokens: 1, input_tokens: 1, output_tokens: 0, duration_ms: 5, tool_calls: 0, turn_id: 't1' },
      }),
    ]);
    expect(answered.waiting).toBeNull();
    expect(answered.items.map((item) => item.kind)).toEqual(['user', 'assistant']);
    expect((answered.items[1] as AssistantItem).error).toBeNull();
  });

  it('is not waiting when its frames came before the REST answer', () => {
    const early = run([
      { type: 'user_sending', localId: 'local-1', text: 'hello' },
      frame({ type: 'agent_state', payload: { state: 'thinking', turn_id: 't1' } }),
      frame({ type: 'token', payload: { text: 'Hi', final: false, turn_id: 't1' } }),
      { type: 'user_sent', localId: 'local-1', message: message('t1', 'user', 'hello') },
    ]);
    expect(early.waiting).toBeNull();
  });

  it('ends when the queued turn is cancelled', () => {
    const cancelled = run([...sent, frame({ type: 'error', payload: { code: 'CANCELLED', message: 'Cancelled.', turn_id: 't1' } })]);
    expect(cancelled.waiting).toBeNull();
  });
});

describe('the routing reason after a reload', () => {
  it('comes from the stored reply: which workflow answered and why', () => {
    const loaded = run([
      {
        type: 'history',
        messages: [message('t1', 'user', 'invoice?'), message('r1', 'assistant', 'Here.', { workflow: 'billing', routing_reason: 'trigger' })],
      },
    ]);
    expect((loaded.items[1] as AssistantItem).routing).toEqual({ workflow: 'billing', reason: 'trigger' });
  });
});

describe('a reply the history shows, when its turn is replayed (a reload soon after, or during a confirmation)', () => {
  const history: TranscriptAction = {
    type: 'history',
    messages: [
      message('t1', 'user', 'write it'),
      message('r0', 'assistant', "I'll use write_file. ", {
        tool_calls: [{ tool_call_id: 'c1', tool_name: 'write_file', input: { path: 'a' }, output: null, duration_ms: 5, error: 'CANCELLED' }],
      }),
    ],
  };
  const text = (item: unknown) =>
    (item as AssistantItem).parts
      .filter((part) => part.kind === 'text')
      .map((part) => (part as { text: string }).text)
      .join('');

  it('stays one bubble: repeated tokens are consumed, tool calls matched by id, the ending shown once', () => {
    const after = run([
      history,
      frame({ type: 'agent_state', payload: { state: 'thinking', turn_id: 't1' } }),
      frame({ type: 'token', payload: { text: "I'll use ", final: false, turn_id: 't1' } }),
      frame({ type: 'token', payload: { text: 'write_file. ', final: false, turn_id: 't1' } }),
      frame({ type: 'tool_start', payload: { tool_name: 'write_file', tool_call_id: 'c1', input: { path: 'a' }, turn_id: 't1' } }),
      frame({ type: 'tool_end', payload: { tool_name: 'write_file', tool_call_id: 'c1', duration_ms: 5, error: 'CANCELLED', turn_id: 't1' } }),
      frame({ type: 'agent_state', payload: { state: 'idle', turn_id: 't1' } }),
      frame({ type: 'error', payload: { code: 'CANCELLED', message: 'Cancelled.', turn_id: 't1' } }),
    ]);
    const replies = after.items.filter((item) => item.kind === 'assistant');
    expect(replies).toHaveLength(1);
    expect(text(replies[0])).toBe("I'll use write_file. ");
    expect((replies[0] as AssistantItem).parts.filter((part) => part.kind === 'tool')).toHaveLength(1);
    // The ending is shown once, as the cancel of a live turn is: "Cancelled." after the bubble.
    expect(after.items.filter((item) => item.kind === 'notice').map((item) => (item as { text: string }).text)).toEqual(['Cancelled.']);
  });

  it('appends what is new after the stored text (the turn went on after the history was read)', () => {
    const after = run([
      history,
      frame({ type: 'token', payload: { text: "I'll use write_file. ", final: false, turn_id: 't1' } }),
      frame({ type: 'token', payload: { text: 'Done.', final: true, turn_id: 't1' } }),
    ]);
    expect(after.items.filter((item) => item.kind === 'assistant').map(text)).toEqual(["I'll use write_file. Done."]);
  });
});
