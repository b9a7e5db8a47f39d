import fc from 'fast-check';
import type { MessageRecord } from '../../src/db/turn-store';
import { planTurn, regroupedTurn } from '../../src/worker/conversation';
import { messageRecord } from '../helpers/message-record';

/** A stored row: ids are `m<ordinal>`, so a row's turn is named by the ordinal of its user message. */
function row(ordinal: number, role: MessageRecord['role'], turn: number | null, replyTo: number | null = null): MessageRecord {
  return messageRecord({
    ordinal,
    id: `m${ordinal}`,
    role,
    content: `${role} ${ordinal}`,
    reply_to: replyTo === null ? null : `m${replyTo}`,
    turn_id: turn === null ? null : `m${turn}`,
  });
}

/**
 * A conversation as a worker loads it (in ordinal order): mostly user messages each answered by a
 * reply (and tool rows) of their own turn, with what mid-turn messages leave behind mixed in —
 * a user message merged into an earlier turn, a reply stored after newer messages, a row of no turn.
 */
const conversation = fc
  .array(
    fc.record({
      kind: fc.constantFrom('user', 'user', 'user', 'reply', 'reply', 'reply', 'tool', 'system', 'merged', 'late-reply'),
      pick: fc.nat(),
    }),
    { minLength: 1, maxLength: 14 },
  )
  .map((steps) => {
    const rows: MessageRecord[] = [];
    const users: number[] = [];
    for (const [index, step] of steps.entries()) {
      const ordinal = index + 1;
      const lastUser = users.at(-1) ?? null;
      const anyUser = users.length > 0 ? users[step.pick % users.length]! : null;
      if (step.kind === 'user' || lastUser === null) {
        rows.push(row(ordinal, 'user', ordinal));
        users.push(ordinal);
      } else if (step.kind === 'merged') rows.push(row(ordinal, 'user', anyUser));
      else if (step.kind === 'reply') rows.push(row(ordinal, 'assistant', lastUser, lastUser));
      else if (step.kind === 'late-reply') rows.push(row(ordinal, 'assistant', anyUser, anyUser));
      else if (step.kind === 'tool') rows.push(row(ordinal, 'tool', lastUser));
      else rows.push(row(ordinal, 'system', null));
    }
    return rows;
  });

it('plans every conversation as the general plan does (the usual turn takes a shortcut)', () => {
  fc.assert(
    fc.property(conversation, fc.nat(), fc.nat(), fc.boolean(), (rows, currentPick, answeredPick, collect) => {
      const users = rows.filter((candidate) => candidate.role === 'user');
      const current = users[currentPick % users.length]!;
      const answeredThrough = answeredPick % (rows.length + 1);
      expect(planTurn(rows, answeredThrough, current, collect)).toEqual(regroupedTurn(rows, answeredThrough, current, collect));
    }),
    { numRuns: 3_000 },
  );
});

it('keeps a usual conversation as stored: its rows in order, nothing merged or left', () => {
  const rows = [
    row(1, 'user', 1),
    row(2, 'assistant', 1, 1),
    row(3, 'system', null),
    row(4, 'user', 4),
    row(5, 'tool', 4),
    row(6, 'assistant', 4, 4),
    row(7, 'user', 7),
  ];
  const plan = planTurn(rows, 6, rows[6]!, false);
  expect(plan).toEqual({ rows, merged: [], last: rows[6], waitingOrdinals: [], asStored: true });
  expect(plan.rows).not.toBe(rows);
});

it('groups a reply stored after a newer message with the message it answers', () => {
  // m3 arrived while m1's turn ran; m1's reply (m4) was stored after it; m3 is the turn now.
  const rows = [row(1, 'user', 1), row(2, 'assistant', 1, 1), row(3, 'user', 3), row(4, 'tool', 1)];
  const plan = planTurn(rows, 2, rows[2]!, false);
  expect(plan.rows.map((candidate) => candidate.id)).toEqual(['m1', 'm2', 'm4', 'm3']);
  expect(plan.asStored).toBe(false);
});
