import { describe, expect, it } from 'vitest';
import { reconnectDelay } from './reconnect-policy';

describe('reconnectDelay (the spec’s client policy)', () => {
  it('reconnects at once, then backs off 1, 2, 4, 8, 16 s, capped at 30 s', () => {
    expect([1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map(reconnectDelay)).toEqual([0, 1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000, 30000]);
  });

  it('stops after 10 consecutive failures', () => {
    expect(reconnectDelay(11)).toBeNull();
  });
});
