import { randomUUID } from 'node:crypto';
import type { SessionFrame } from '../../src/core/events';
import { InProcessEventLog } from '../../src/events/in-process-event-log';
import { EVENT_LOG_DEFAULTS } from '../../src/events/retention';

/**
 * The embedded event log's memory follows the sessions active in the retention window: frames go
 * after their retention, the session after its frames (but for a bounded set of seq counters).
 * The contract suite (test/contract/turn-drivers.test.ts) covers what both drivers share.
 */
const limits = { ...EVENT_LOG_DEFAULTS, retentionAfterDisconnectMs: 1_000, retentionAfterAppendMs: 2_000, countersKept: 100 };
/** Past the retention and the next sweep. */
const PAST_RETENTION_MS = limits.retentionAfterAppendMs + 5_000 + 1;

const token = (text: string) => ({ type: 'token', payload: { text, final: false } }) as const;

let events: InProcessEventLog;

beforeEach(() => {
  jest.useFakeTimers();
  events = new InProcessEventLog(limits);
});

afterEach(async () => {
  await events.close();
  jest.useRealTimers();
});

it('lets go of idle sessions: after 1,000 sessions with a turn each, only countersKept counters stay', async () => {
  const ids = Array.from({ length: 1_000 }, () => randomUUID());
  for (const id of ids) {
    for (let i = 0; i < 20; i += 1) await events.append(id, token(String(i)));
  }
  expect(events.held()).toEqual({ sessions: 1_000, counters: 0 });
  jest.advanceTimersByTime(PAST_RETENTION_MS);
  expect(events.held()).toEqual({ sessions: 0, counters: 100 });
  // The most recently retired keep counting up; one past the bound starts again at 1, like after a restart.
  expect((await events.append(ids.at(-1)!, token('again'))).seq).toBe(21);
  expect((await events.append(ids[0]!, token('again'))).seq).toBe(1);
  expect(events.held()).toEqual({ sessions: 2, counters: 99 });
});

it('keeps a session whose frames were never watched for the append retention, then lets it go', async () => {
  const id = randomUUID();
  await events.append(id, token('a'));
  jest.advanceTimersByTime(limits.retentionAfterAppendMs - 1);
  expect((await events.replay(id, -1)).frames.map((frame) => frame.seq)).toEqual([1]);
  jest.advanceTimersByTime(PAST_RETENTION_MS);
  expect(await events.replay(id, -1)).toEqual({ frames: [], complete: true });
  expect(events.held().counters).toBe(0); // the replay held it again…
  jest.advanceTimersByTime(5_000);
  expect(events.held()).toEqual({ sessions: 0, counters: 1 }); // …until the next sweep
});

it('holds a watched session however long, and its frames for the disconnect window after the socket goes', async () => {
  const id = randomUUID();
  const seen: SessionFrame[] = [];
  const unsubscribe = await events.subscribe(id, (frame) => seen.push(frame));
  await events.append(id, token('a'));
  jest.advanceTimersByTime(10 * PAST_RETENTION_MS);
  expect(events.held()).toEqual({ sessions: 1, counters: 0 });
  expect((await events.replay(id, 0)).frames.map((frame) => frame.seq)).toEqual([1]);
  unsubscribe();
  jest.advanceTimersByTime(limits.retentionAfterDisconnectMs - 1);
  expect(await events.replay(id, 0)).toEqual({ frames: seen, complete: true });
  jest.advanceTimersByTime(PAST_RETENTION_MS);
  expect(events.held()).toEqual({ sessions: 0, counters: 1 });
  // A client back with its last_seq replays nothing (too old) and the numbers go on from where it was.
  expect(await events.replay(id, 1)).toEqual({ frames: [], complete: true });
  expect((await events.append(id, token('b'))).seq).toBe(2);
});

it('keeps a counter a client raised (last_seq ahead) when the session is let go', async () => {
  const id = randomUUID();
  expect(await events.replay(id, 41)).toEqual({ frames: [], complete: false });
  jest.advanceTimersByTime(PAST_RETENTION_MS);
  expect(events.held()).toEqual({ sessions: 0, counters: 1 });
  expect((await events.append(id, token('after'))).seq).toBe(42);
});
