import { nextAttemptDelayMs, TURN_RETRIES } from '../../src/queue/turn-retries';

/** When a failed turn is tried again: briefly for a fault of the turn, through an outage for an unreachable database. */
const refused = () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
const attemptsAfter = (error: () => unknown) => Array.from({ length: 17 }, (_, index) => nextAttemptDelayMs(index + 1, error()));

it('a fault of the turn is tried 3 times in all, 1 s then 2 s apart', () => {
  expect(attemptsAfter(() => new Error('the turn broke'))).toEqual([1_000, 2_000, ...Array.from({ length: 15 }, () => null)]);
});

it('a database that refuses connections is waited for: 16 attempts, 1 s then 2 s apart (29 s in all)', () => {
  const delays = attemptsAfter(refused);
  expect(delays).toEqual([1_000, ...Array.from({ length: 14 }, () => 2_000), null, null]);
  expect(delays.reduce<number>((sum, delay) => sum + (delay ?? 0), 0)).toBe(29_000);
  expect(TURN_RETRIES.unreachableAttempts).toBe(16);
});

it('a dropped PostgreSQL connection counts as out of reach too, wrapped as the drivers wrap it', () => {
  const dropped = new Error('Connection terminated unexpectedly');
  expect(nextAttemptDelayMs(5, dropped)).toBe(2_000);
  expect(nextAttemptDelayMs(5, { name: 'SequelizeConnectionRefusedError', message: 'refused', parent: refused() })).toBe(2_000);
  expect(nextAttemptDelayMs(5, new Error('the turn broke'))).toBeNull();
});
