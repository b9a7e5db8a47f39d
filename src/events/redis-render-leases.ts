import type { Redis } from 'ioredis';
import { RENDER_LEASE, type HeldLease, type RenderLeases } from '../core/render-lease';
import { redisKey } from '../redis/connection';

/**
 * Takes the lease when it is free and this turn has the lowest ticket among the turns waiting
 * (waiters not seen for a lease's time to live are dropped: their process died). KEYS: lease,
 * waiters (ticket-ordered set), last seen (hash). ARGV: holder, ticket, ttl, now. 1: taken.
 */
const ACQUIRE = `
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1])
redis.call('HSET', KEYS[3], ARGV[1], ARGV[4])
for _, waiter in ipairs(redis.call('ZRANGE', KEYS[2], 0, -1)) do
  local seen = tonumber(redis.call('HGET', KEYS[3], waiter) or '0')
  if tonumber(ARGV[4]) - seen > tonumber(ARGV[3]) then
    redis.call('ZREM', KEYS[2], waiter)
    redis.call('HDEL', KEYS[3], waiter)
  end
end
redis.call('PEXPIRE', KEYS[2], ARGV[3])
redis.call('PEXPIRE', KEYS[3], ARGV[3])
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
if redis.call('ZRANGE', KEYS[2], 0, 0)[1] ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[3])
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('HDEL', KEYS[3], ARGV[1])
return 1
`;

/** A waiter gives up (its wait ran out). KEYS: waiters, last seen. ARGV: holder. */
const LEAVE = `
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1])
return 1
`;

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
 * its holder, set only when absent, renewed while held, deleted on release; beside it the turns
 * waiting, ordered by ticket, so the next turn in the chat takes it whichever process asks first.
 * A process that dies holding it frees the chat when the key expires (`ttlMs`); a waiter that died is
 * dropped after the same time. A waiting turn asks again every `pollMs`. Redis errors let the answer
 * go out without the lease (never lost for the sake of order).
 */
export class RedisRenderLeases implements RenderLeases {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly limits: RenderLeaseLimits = RENDER_LEASE,
  ) {}

  async acquire(chat: string, holder: string, ticket: number): Promise<HeldLease> {
    const key = redisKey(this.prefix, 'render-lease', chat);
    const waiters = redisKey(this.prefix, 'render-lease', chat, 'waiting');
    const seen = redisKey(this.prefix, 'render-lease', chat, 'seen');
    const value = `${holder}:${Math.random().toString(36).slice(2)}`;
    const deadline = Date.now() + this.limits.maxWaitMs;
    const gaveUp = { waitedOut: true, release: async () => undefined };
    try {
      while ((await this.redis.eval(ACQUIRE, 3, key, waiters, seen, value, String(ticket), String(this.limits.ttlMs), String(Date.now()))) !== 1) {
        if (Date.now() >= deadline) {
          await this.redis.eval(LEAVE, 2, waiters, seen, value);
          return gaveUp;
        }
        await new Promise((resolve) => setTimeout(resolve, this.limits.pollMs));
      }
    } catch {
      return gaveUp;
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
