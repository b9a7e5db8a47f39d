import { CHANNEL_RETRY, retryDelayMs } from '../../src/server/channel-supervisor';

it('waits 2 s before the first retry of a failed channel, doubling each time, never more than 5 minutes', () => {
  expect(CHANNEL_RETRY).toMatchObject({ firstDelayMs: 2_000, factor: 2, maxDelayMs: 300_000 });
  expect([1, 2, 3, 4, 5, 6, 7, 8, 9, 50].map(retryDelayMs)).toEqual([2_000, 4_000, 8_000, 16_000, 32_000, 64_000, 128_000, 256_000, 300_000, 300_000]);
});
