import { describe, expect, it } from 'vitest';
import { type AssistantItem, type TranscriptAction } from './transcript';
import { frame, message, run } from './transcript-fixtures';

const done = (messageId: string, text: string): TranscriptAction =>
  frame({ type: 'done', payload: { message_id: messageId, text, total_tokens: 5, input_tokens: 3, output_tokens: 2, duration_ms: 40, tool_calls: 0 } });

describe('the transcript', () => {
  it('builds a reply token by token, with tool chips in the order they happened', () => {
    const state = run([
      { type: 'user_sending', localId: 'local-1', text: 'save it' },
      frame({ type: 'agent_state', payload: { state: 'thinking' } }),
      frame({ type: 'token', payload: { text: 'Saving', final: false } }),
      frame({ type: 'tool_start', payload: { tool_name: 'write_file', tool_call_id: 'c1', input: { path: 'a' } } }),
      frame({ type: 'tool_end', payload: { tool_name: 'write_file', tool_call_id: 'c1', duration_ms: 12, error: null } }),
      frame({ type: 'token', payload: { text: 'Done', final: true } }),
      frame({ type: 'token', payload: { text: '.', final: true } }),
    ]);
    expect(state.running).toBe(true);
    const reply = state.items[1] as AssistantItem;
    expect(reply.streaming).toBe(true);
    expect(reply.parts).toEqual([
      { kind: 'text', text: 'Saving' },
      { kind: 'tool', call: { id: 'c1', name: 'write_file', input: { path: 'a' }, status: 'ok', durationMs: 12, error: null } },
      { kind: 'text', text: 'Done.' },
    ]);
    const finished = run([done('m2', 'SavingDone.')], state);
    expect(finished.running).toBe(false);
    expect(finished.agentState).toBe('idle');
    expect(finished.items[1]).toMatchObject({ id: 'm2', streaming: false });
  });

  it('opens the confirmation, and closes it when answered or when the turn goes idle', () => {
    const request = frame({ type: 'tool_confirm_request', payload: { confirmation_id: 'k', tool: 'write_file', parameters: {}, message: 'ok?' } });
    expect(run([request]).confirm?.confirmation_id).toBe('k');
    expect(run([request, { type: 'confirm_answered' }]).confirm).toBeNull();
    expect(run([request, frame({ type: 'agent_state', payload: { state: 'idle' } })]).confirm).toBeNull();
  });

  it('shows an approval’s progress without opening its dialog again once the requester answered it (issue 30)', () => {
    const progress = (approvals: number) =>
      frame({
        type: 'tool_confirm_request',
        payload: {
          confirmation_id: 'ap1',
          tool: 'deploy',
          parameters: {},
          message: `Allow deploy? Waiting for approval by role admin (${approvals} of 2).`,
          approval: {
            approvers: 'role admin',
            quorum: 2,
            approvals,
            approved_by: approvals > 0 ? ['bob'] : [],
            escalated: false,
            expires_at: '2026-01-01T00:15:00.000Z',
            text: `Waiting for approval by role admin (${approvals} of 2)`,
          },
        },
      });
    // Still open: the progress updates the dialog in place.
    const open = run([progress(0), progress(1)]);
    expect(open.confirm?.approval?.approvals).toBe(1);
    expect(open.approvalWaiting).toBeNull();
    // Answered (refused: the requester's own click), then another approver's click is re-sent: no dialog, a status line.
    const answered = run([progress(0), { type: 'confirm_answered' }]);
    expect(answered.confirm).toBeNull();
    expect(answered.approvalWaiting?.approval?.approvals).toBe(0);
    const counted = run([progress(1)], answered);
    expect(counted.confirm).toBeNull();
    expect(counted.approvalWaiting?.approval?.text).toBe('Waiting for approval by role admin (1 of 2)');
    // The tool ran (approved): nothing is waited for any more.
    const ran = run([frame({ type: 'tool_start', payload: { tool_name: 'deploy', tool_call_id: 'c1', input: {} } })], counted);
    expect(ran.approvalWaiting).toBeNull();
    // A plain confirmation asked again (an answer lost while reconnecting) opens again.
    const plain = frame({ type: 'tool_confirm_request', payload: { confirmation_id: 'k2', tool: 'write_file', parameters: {}, message: 'ok?' } });
    expect(run([plain, { type: 'confirm_answered' }, plain]).confirm?.confirmation_id).toBe('k2');
  });

  it('drops a replayed reply that the history already holds (a reload after the turn)', () => {
    const history = run([{ type: 'history', messages: [message('u1', 'user', 'hi'), message('m1', 'assistant', 'Hello!')] }]);
    const replayed = run([frame({ type: 'token', payload: { text: 'Hello!', final: false } }), done('m1', 'Hello!')], history);
    expect(replayed.items.map((item) => item.id)).toEqual(['u1', 'm1']);
  });

  it('keeps a reply still streaming when history arrives again after a reconnect', () => {
    const live = run([{ type: 'history', messages: [message('u1', 'user', 'count')] }, frame({ type: 'token', payload: { text: 'one two', final: false } })]);
    const refreshed = run([{ type: 'history', messages: [message('u1', 'user', 'count')] }], live);
    expect(refreshed.items).toHaveLength(2);
    expect((refreshed.items[1] as AssistantItem).parts).toEqual([{ kind: 'text', text: 'one two' }]);
  });

  it('places a reply after its user message when frames carry the turn id', () => {
    const state = run([
      { type: 'history', messages: [message('u1', 'user', 'first'), message('u2', 'user', 'second')] },
      frame({ type: 'token', payload: { text: 'to first', final: false, turn_id: 'u1' } }),
    ]);
    expect(state.items.map((item) => item.kind)).toEqual(['user', 'assistant', 'user']);
  });

  it('shows a cancellation, but not a replayed error of a turn already over', () => {
    const cancelled = run([
      frame({ type: 'token', payload: { text: 'Thinking', final: false } }),
      frame({ type: 'agent_state', payload: { state: 'idle' } }),
      frame({ type: 'error', payload: { code: 'CANCELLED', message: 'Cancelled by the client.' } }),
    ]);
    expect(cancelled.items.at(-1)).toMatchObject({ kind: 'notice', tone: 'error', text: 'Cancelled.' });
    const stale: TranscriptAction = {
      ...(frame({ type: 'error', payload: { code: 'CANCELLED', message: 'x' } }) as Extract<TranscriptAction, { type: 'frame' }>),
      replayed: true,
    };
    expect(run([stale]).items).toEqual([]);
  });

  it('ends a turn when its frames say so (the protocol’s reducer), not at its own idle', () => {
    const history: TranscriptAction = { type: 'history', messages: [message('u1', 'user', 'go')] };
    const cancelling = run([
      history,
      frame({ type: 'token', payload: { text: 'Part', final: false, turn_id: 'u1' } }),
      frame({ type: 'agent_state', payload: { state: 'idle', turn_id: 'u1' } }),
    ]);
    expect(cancelling.items[1]).toMatchObject({ kind: 'assistant', streaming: true });
    const cancelled = run([frame({ type: 'error', payload: { code: 'CANCELLED', message: 'The turn was cancelled.', turn_id: 'u1' } })], cancelling);
    expect(cancelled.items[1]).toMatchObject({ kind: 'assistant', streaming: false });
    expect(cancelled.items.at(-1)).toMatchObject({ kind: 'notice', tone: 'error', text: 'Cancelled.' });
    expect(cancelled.turns).toEqual({});
    const failed = run([
      history,
      frame({ type: 'token', payload: { text: 'Part', final: false, turn_id: 'u1' } }),
      frame({ type: 'error', payload: { code: 'PROVIDER_ERROR', message: 'down', turn_id: 'u1' } }),
      frame({ type: 'agent_state', payload: { state: 'error', turn_id: 'u1' } }),
    ]);
    expect(failed.items[1]).toMatchObject({ streaming: true, error: { code: 'PROVIDER_ERROR', message: 'down' } });
    const over = run([frame({ type: 'agent_state', payload: { state: 'idle', turn_id: 'u1' } })], failed);
    expect(over.items[1]).toMatchObject({ streaming: false, error: { code: 'PROVIDER_ERROR', message: 'down' } });
  });

  it('ends a reply still streaming when the hub says on connect that no turn runs', () => {
    const live = run([
      { type: 'history', messages: [message('u1', 'user', 'go')] },
      frame({ type: 'token', payload: { text: 'Part', final: false, turn_id: 'u1' } }),
    ]);
    const restarted = run([frame({ type: 'agent_state', payload: { state: 'idle' } })], live);
    expect(restarted.items[1]).toMatchObject({ kind: 'assistant', streaming: false });
    expect(restarted.running).toBe(false);
    expect(restarted.turns).toEqual({});
  });

  it('shows a turn’s tool rounds and reply from history as one message, in either stored shape', () => {
    const state = run([
      {
        type: 'history',
        messages: [
          message('u1', 'user', 'save'),
          message('a1', 'assistant', '', { tool_calls: [{ id: 'c1', name: 'write_file', arguments: '{"path":"a"}' } as never] }),
          message('t1', 'tool', 'wrote a'),
          message('a2', 'assistant', 'Saved.', { tool_calls: [] }),
          message('u2', 'user', 'again'),
          message('a3', 'assistant', 'Done.', {
            tool_calls: [{ tool_call_id: 'c2', tool_name: 'write_file', input: { path: 'b' }, output: 'x', duration_ms: 3, error: 'denied' }],
          }),
        ],
      },
    ]);
    expect(state.items.map((item) => item.id)).toEqual(['u1', 'a2', 'u2', 'a3']);
    expect((state.items[1] as AssistantItem).parts).toEqual([
      { kind: 'tool', call: { id: 'c1', name: 'write_file', input: { path: 'a' }, status: 'called', durationMs: null, error: null } },
      { kind: 'text', text: 'Saved.' },
    ]);
    expect((state.items[3] as AssistantItem).parts[1]).toEqual({
      kind: 'tool',
      call: { id: 'c2', name: 'write_file', input: { path: 'b' }, status: 'error', durationMs: 3, error: 'denied' },
    });
  });

  it('removes a message the hub refused and keeps the one it stored', () => {
    const sending = run([
      { type: 'user_sending', localId: 'l1', text: 'a' },
      { type: 'user_sending', localId: 'l2', text: 'b' },
    ]);
    const after = run(
      [
        { type: 'user_failed', localId: 'l1' },
        { type: 'user_sent', localId: 'l2', message: message('u9', 'user', 'b') },
      ],
      sending,
    );
    expect(after.items).toEqual([{ kind: 'user', id: 'u9', text: 'b', pending: false }]);
  });
});
