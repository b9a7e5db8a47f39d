import type { Redis } from 'ioredis';
import { RENDER_LEASE, type HeldLease, type RenderLeases } from '../core/render-lease';
import { redisKey } from '../redis/connection';

/** Renews the key while it is still ours. ARGV: holder, ttl. */
const RENEW = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
return redis.call('PEXPIRE', KEYS[1], ARGV[2])
`;

/** Deletes the key while it is still ours (a key that expired and was taken by another stays). */
const RELEASE = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
return redis.call('DEL', KEYS[1])
`;

export type RenderLeaseLimits = { maxWaitMs: number; ttlMs: number; renewMs: number; pollMs: number };

/**
 * The rendering lease across API processes: one key per chat (`<prefix>:render-lease:<chat>`) holding
 * its holder, set only when absent (`SET NX PX`), renewed while held, deleted on release. A process
 * that dies holding it frees the chat when the key expires (`ttlMs`). A waiting turn asks again every
 * `pollMs`. Redis errors let the answer go out without the lease (never lost for the sake of order).
 */
export class RedisRenderLeases implements RenderLeases {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly limits: RenderLeaseLimits = RENDER_LEASE,
  ) {}

  async acquire(chat: string, holder: string): Promise<HeldLease> {
    const key = redisKey(this.prefix, 'render-lease', chat);
    const value = `${holder}:${Math.random().toString(36).slice(2)}`;
    const deadline = Date.now() + this.limits.maxWaitMs;
    try {
      while ((await this.redis.set(key, value, 'PX', this.limits.ttlMs, 'NX')) === null) {
        if (Date.now() >= deadline) return { waitedOut: true, release: async () => undefined };
        await new Promise((resolve) => setTimeout(resolve, this.limits.pollMs));
      }
    } catch {
      return { waitedOut: true, release: async () => undefined };
    }
    const renew = setInterval(() => void this.redis.eval(RENEW, 1, key, value, String(this.limits.ttlMs)).catch(() => undefined), this.limits.renewMs);
    renew.unref();
    let released = false;
    return {
      waitedOut: false,
      release: async () => {
        if (released) return;
        released = true;
        clearInterval(renew);
        await this.redis.eval(RELEASE, 1, key, value).catch(() => undefined);
      },
    };
  }
}
