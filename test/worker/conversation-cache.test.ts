import type { MessageRecord } from '../../src/db/turn-store';
import { ConversationCache } from '../../src/worker/conversation-cache';

const rows = (count: number, from = 1) => Array.from({ length: count }, (_, index) => ({ ordinal: from + index }) as MessageRecord);
const at = new Date(1_000);

it('keeps at most maxMessages in all, dropping the least recently kept sessions first', () => {
  const cache = new ConversationCache({ maxSessions: 100, maxMessages: 10 });
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
  const cache = new ConversationCache({ maxSessions: 2, maxMessages: 1_000 });
  cache.keep('a', at, rows(1));
  cache.keep('b', at, rows(1));
  cache.keep('c', at, rows(1));
  expect([cache.readAfter('a'), cache.readAfter('b'), cache.readAfter('c'), cache.messages]).toEqual([undefined, 1, 1, 2]);
});
