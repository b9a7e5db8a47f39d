import type { SessionFrame } from '../../src/core/events';
import { TurnFollower, type TurnEnd, type TurnView } from '../../src/cli/chat/turn-follower';
import { replyOfTurn } from '../../src/cli/sessions-lookup';
import type { MessageView } from '../../src/protocol/payloads';

/** How a client follows one turn through its frames (no hub: the frames are given). */
let seq = 0;
const frame = (type: string, payload: Record<string, unknown>): SessionFrame =>
  ({ type, payload, session_id: 's', seq: ++seq, ts: '' }) as unknown as SessionFrame;
const state = (value: string) => frame('agent_state', { state: value });
const token = (text: string) => frame('token', { text, final: false });

function follow(options: { joined?: boolean } = {}) {
  const shown: string[] = [];
  const ends: TurnEnd[] = [];
  const asked: string[] = [];
  const progress: string[] = [];
  const notices: string[] = [];
  const view: TurnView = {
    text: (text) => shown.push(text),
    changed: () => undefined,
    confirm: (request) => asked.push(request.confirmation_id),
    progress: (request) => progress.push(request.approval?.text ?? ''),
    notice: (error) => notices.push(error.code),
    ended: (end) => ends.push(end),
  };
  return { follower: new TurnFollower(view, options), shown, ends, asked, progress, notices };
}

const done = (text: string) => frame('done', { message_id: 'm', text, total_tokens: 3, input_tokens: 2, output_tokens: 1, duration_ms: 5, tool_calls: 0 });

afterEach(() => jest.useRealTimers());

it('ends at done, showing tokens as they come', () => {
  const { follower, shown, ends } = follow();
  for (const next of [state('thinking'), state('writing'), token('Hi '), token('there.'), state('done'), done('Hi there.')]) follower.handle(next);
  expect(shown).toEqual(['Hi ', 'there.']);
  expect(ends).toEqual([expect.objectContaining({ kind: 'done' })]);
});

it('a cancel: idle, then error CANCELLED, ends as cancelled (not as an end out of sight)', () => {
  jest.useFakeTimers();
  const { follower, ends } = follow();
  for (const next of [state('thinking'), state('idle'), frame('error', { code: 'CANCELLED', message: 'The turn was cancelled.' })]) follower.handle(next);
  jest.advanceTimersByTime(3_000); // no clock decides the end: the frames do
  expect(ends).toEqual([{ kind: 'cancelled', errors: [{ code: 'CANCELLED', message: 'The turn was cancelled.' }] }]);
});

it('an agent failure: error, agent_state error, idle', () => {
  const { follower, ends } = follow();
  for (const next of [state('thinking'), frame('error', { code: 'PROVIDER_ERROR', message: 'down' }), state('error'), state('idle')]) follower.handle(next);
  expect(ends).toEqual([{ kind: 'failed', errors: [{ code: 'PROVIDER_ERROR', message: 'down' }] }]);
});

// No idle timer (issue 27): the hub's on-connect state, `idle` naming no turn, says at once that no
// turn runs; the follower used to wait 1.5 s for a CANCELLED that never comes after a reconnect.
it('idle after an outage with nothing else: the turn ended out of sight (its reply is looked up)', () => {
  const { follower, shown, ends } = follow();
  for (const next of [state('thinking'), state('writing'), token('Part')]) follower.handle(next);
  follower.resumed(true);
  follower.handle(state('idle')); // the on-connect state of the restarted hub: no turn runs
  expect(ends).toEqual([{ kind: 'ended-unseen', errors: [] }]);
  expect(follower.transcript.finish('Part and the rest.')).toEqual({ text: ' and the rest.', restated: false });
  expect(shown).toEqual(['Part']);
});

it("after a reconnect, the turn's own idle (it names the turn) is not the hub saying no turn runs", () => {
  const { follower, ends } = follow();
  follower.turnId = 't1';
  follower.handle(frame('agent_state', { state: 'thinking', turn_id: 't1' }));
  follower.resumed(false);
  follower.handle(frame('agent_state', { state: 'idle', turn_id: 't1' })); // replayed: a cancel under way
  expect(ends).toEqual([]);
  follower.handle(frame('error', { code: 'CANCELLED', message: 'The turn was cancelled.', turn_id: 't1' }));
  expect(ends).toEqual([{ kind: 'cancelled', errors: [{ code: 'CANCELLED', message: 'The turn was cancelled.' }] }]);
});

it('a rerun after a restart repeats nothing already shown; frames of another turn are ignored', () => {
  const { follower, shown } = follow();
  follower.turnId = 'turn-1';
  for (const next of [state('thinking'), token('One '), token('two ')]) follower.handle(next);
  follower.handle(frame('token', { text: 'other turn', final: false, turn_id: 'turn-2' }));
  for (const next of [state('thinking'), token('One '), token('two '), token('three.'), done('One two three.')]) follower.handle(next);
  expect(shown.join('')).toBe('One two three.');
});

it('a joined turn is held and shown whole at its end; replies to client frames are notices', () => {
  const notices: string[] = [];
  const shown: string[] = [];
  const follower = new TurnFollower(
    {
      text: (text) => shown.push(text),
      changed: () => undefined,
      confirm: () => undefined,
      progress: () => undefined,
      notice: (error) => notices.push(error.code),
      ended: () => undefined,
    },
    { joined: true },
  );
  for (const next of [token('middle '), frame('error', { code: 'INVALID_MESSAGE', message: 'no confirmation pending' }), done('start middle end')])
    follower.handle(next);
  expect(shown).toEqual(['start middle end']);
  expect(notices).toEqual(['INVALID_MESSAGE']);
});

it("finds a turn's stored reply in the history: the last assistant message without tool calls before the next user message", () => {
  const message = (id: string, role: MessageView['role'], content: string, toolCalls: unknown[] = []) =>
    ({ id, role, content, tool_calls: toolCalls }) as unknown as MessageView;
  const history = [
    message('u1', 'user', 'first'),
    message('a1', 'assistant', 'Let me look.', [{ id: 'c1' }]),
    message('t1', 'tool', '{}'),
    message('a2', 'assistant', 'Found it.'),
    message('u2', 'user', 'second'),
    message('a3', 'assistant', 'Other.'),
  ];
  expect(replyOfTurn(history, 'u1')?.id).toBe('a2');
  expect(replyOfTurn(history, 'u2')?.id).toBe('a3');
  expect(replyOfTurn(history.slice(0, 3), 'u1')).toBeNull();
  expect(replyOfTurn(history, 'missing')).toBeNull();
});

it("an approval re-sent as clicks count is asked once, then shown as progress; the requester's refused click is a notice (issue 30)", () => {
  const { follower, asked, progress, notices, ends } = follow();
  const approval = (approvals: number) =>
    frame('tool_confirm_request', {
      confirmation_id: 'ap1',
      tool: 'deploy',
      parameters: {},
      message: 'Allow deploy?',
      approval: {
        approvers: 'role admin',
        quorum: 2,
        approvals,
        approved_by: [],
        escalated: false,
        expires_at: '',
        text: `Waiting for approval by role admin (${approvals} of 2)`,
      },
    });
  follower.handle(state('thinking'));
  follower.handle(approval(0));
  follower.handle(frame('error', { code: 'FORBIDDEN', message: 'Your own request needs approval by someone else.' }));
  follower.handle(approval(1));
  follower.handle(approval(1));
  expect(asked).toEqual(['ap1']);
  expect(progress).toEqual(['Waiting for approval by role admin (1 of 2)', 'Waiting for approval by role admin (1 of 2)']);
  expect(notices).toEqual(['FORBIDDEN']);
  // A plain confirmation asked again (the hub re-asks after a reconnect) is asked again.
  const plain = frame('tool_confirm_request', { confirmation_id: 'c2', tool: 'save', parameters: {}, message: 'ok?' });
  follower.handle(plain);
  follower.handle(plain);
  expect(asked).toEqual(['ap1', 'c2', 'c2']);
  follower.handle(done('Deployed.'));
  expect(ends).toEqual([expect.objectContaining({ kind: 'done', errors: [] })]);
});
