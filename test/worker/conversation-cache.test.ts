import { randomUUID } from 'node:crypto';
import type { MessageRecord } from '../../src/db/turn-store';
import { messageRecord } from '../helpers/message-record';
import { CONVERSATION_CACHE_DEFAULTS, ConversationCache, messageBytes, messagesAfter } from '../../src/worker/conversation-cache';

/** The worker's conversation cache is bounded by sessions and by bytes (the whole of it, whatever the messages carry). */
function message(sessionId: string, ordinal: number, fields: Partial<MessageRecord> = {}): MessageRecord {
  return messageRecord({ ordinal, id: randomUUID(), session_id: sessionId, created_at: new Date(), ...fields });
}

const updatedAt = new Date('2026-11-26T12:00:00Z');
const MIB = 1024 * 1024;

it('stays within its byte budget when every session carries a message of 1 MiB (a count alone kept 1,000 of them)', () => {
  const cache = new ConversationCache();
  const ids = Array.from({ length: 1_000 }, () => randomUUID());
  for (const id of ids) {
    cache.keep(id, updatedAt, [message(id, 1, { metadata: { pad: 'p'.repeat(MIB - 20) } }), message(id, 2, { role: 'assistant', content: 'hi' })]);
  }
  const { sessions, bytes } = cache.held();
  expect(bytes).toBeLessThanOrEqual(CONVERSATION_CACHE_DEFAULTS.maxBytes);
  expect(sessions).toBe(Math.floor(CONVERSATION_CACHE_DEFAULTS.maxBytes / (bytes / sessions)));
  // The most recent are the ones kept.
  expect(cache.readAfter(ids.at(-1)!)).toBe(2);
  expect(cache.readAfter(ids[0]!)).toBeUndefined();
});

it('keeps the last maxSessions small conversations, and counts their bytes out as they go', () => {
  const cache = new ConversationCache({ ...CONVERSATION_CACHE_DEFAULTS, maxSessions: 10, maxBytes: MIB });
  const ids = Array.from({ length: 25 }, () => randomUUID());
  for (const id of ids) cache.keep(id, updatedAt, [message(id, 1)]);
  expect(cache.held()).toEqual({ sessions: 10, bytes: 10 * messageBytes(message(ids[0]!, 1)) });
  for (const id of ids) cache.forget(id);
  expect(cache.held()).toEqual({ sessions: 0, bytes: 0 });
});

it('does not keep a conversation larger than the whole budget, nor the one it replaces', () => {
  const cache = new ConversationCache({ ...CONVERSATION_CACHE_DEFAULTS, maxSessions: 10, maxBytes: 64 * 1024 });
  const id = randomUUID();
  const other = randomUUID();
  cache.keep(other, updatedAt, [message(other, 1)]);
  cache.keep(id, updatedAt, [message(id, 1)]);
  cache.keep(id, updatedAt, [message(id, 1), message(id, 2, { content: 'x'.repeat(40 * 1024) })]);
  expect(cache.readAfter(id)).toBeUndefined();
  expect(cache.readAfter(other)).toBe(1);
  expect(cache.held().sessions).toBe(1);
});

it('estimates text, metadata and tool calls (two bytes per UTF-16 unit) once per message', () => {
  const small = message('s', 1);
  const big = message('s', 2, { content: 'é'.repeat(1_000), metadata: { name: 'x'.repeat(500) }, tool_calls: [{ input: 'y'.repeat(500) }] });
  expect(messageBytes(big) - messageBytes(small)).toBeGreaterThan(2 * 2_000);
  big.content = ''; // records are not changed once stored; the first estimate stands
  expect(messageBytes(big) - messageBytes(small)).toBeGreaterThan(2 * 2_000);
});

const rows = (count: number, from = 1) => Array.from({ length: count }, (_, index) => message('s', from + index));
const at = new Date(1_000);

it('keeps at most maxMessages in all, dropping the least recently kept sessions first', () => {
  const cache = new ConversationCache({ maxSessions: 100, maxBytes: MIB, maxMessages: 10 });
  cache.keep('a', at, rows(4));
  cache.keep('b', at, rows(4));
  cache.keep('a', at, rows(5)); // a is now the most recent
  expect(cache.messages).toBe(9);
  cache.keep('c', at, rows(3)); // 12 > 10: b (least recent) goes
  expect([cache.readAfter('a'), cache.readAfter('b'), cache.readAfter('c')]).toEqual([5, undefined, 3]);
  expect(cache.messages).toBe(8);
  cache.keep('d', at, rows(11)); // larger than the whole budget: not kept, nothing else dropped for it
  expect([cache.readAfter('d'), cache.messages]).toEqual([undefined, 8]);
  cache.forget('a');
  expect(cache.messages).toBe(3);
});

it('keeps at most maxSessions sessions', () => {
  const cache = new ConversationCache({ maxSessions: 2, maxBytes: MIB, maxMessages: 1_000 });
  cache.keep('a', at, rows(1));
  cache.keep('b', at, rows(1));
  cache.keep('c', at, rows(1));
  expect([cache.readAfter('a'), cache.readAfter('b'), cache.readAfter('c'), cache.messages]).toEqual([undefined, 1, 1, 2]);
});

it('holds sixteen 500-message sessions taking turns in rotation with the default limits (the turn-cost history load)', () => {
  const cache = new ConversationCache();
  const sessions = Array.from({ length: 16 }, (_, index) => `long-${index}`);
  const history = (sessionId: string) =>
    Array.from({ length: 500 }, (_, index) => message(sessionId, index + 1, { content: 'Please summarise the incident report from last night.' }));
  for (let round = 0; round < 2; round += 1) for (const sessionId of sessions) cache.keep(sessionId, at, history(sessionId));
  // Least recently used goes first: had the limits held fewer than sixteen, every turn of the rotation would miss.
  expect(sessions.map((sessionId) => cache.readAfter(sessionId))).toEqual(sessions.map(() => 500));
});

it('joins the kept messages after the memory summary with the fresh ones, in order', () => {
  const cache = new ConversationCache();
  const id = randomUUID();
  const kept = [1, 2, 3, 4].map((ordinal) => message(id, ordinal));
  cache.keep(id, updatedAt, kept);
  const fresh = [message(id, 5)];
  const ordinals = (messages: readonly MessageRecord[] | null) => messages?.map((row) => row.ordinal);
  expect(ordinals(cache.join(id, updatedAt, null, fresh))).toEqual([1, 2, 3, 4, 5]);
  expect(ordinals(cache.join(id, updatedAt, 2, fresh))).toEqual([3, 4, 5]);
  expect(ordinals(cache.join(id, updatedAt, 4, fresh))).toEqual([5]);
  expect(ordinals(cache.join(id, updatedAt, 9, []))).toEqual([]);
  // Another writer touched the session: not trusted.
  expect(cache.join(id, new Date(updatedAt.getTime() + 1), null, fresh)).toBeNull();
  // The kept array itself is never handed out to be changed.
  expect(cache.join(id, updatedAt, null, [])).not.toBe(kept);
});

it('messagesAfter cuts the prefix at or before the ordinal, and returns the array itself when nothing is cut', () => {
  const rows = [3, 5, 8].map((ordinal) => message('s', ordinal));
  expect(messagesAfter(rows, 0)).toBe(rows);
  expect(messagesAfter(rows, 5).map((row) => row.ordinal)).toEqual([8]);
  expect(messagesAfter(rows, 4).map((row) => row.ordinal)).toEqual([5, 8]);
  expect(messagesAfter(rows, 8)).toEqual([]);
  expect(messagesAfter([], 3)).toEqual([]);
});
