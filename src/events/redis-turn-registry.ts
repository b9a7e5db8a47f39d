import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { AGENT_STATES, type AgentState } from '../core/events';
import type { HandOver, LiveTurn, LiveTurnChange, PendingConfirmation, TurnRegistry } from '../core/turns';
import { redisKey } from '../redis/connection';

export const REDIS_TURN_REGISTRY_DEFAULTS = {
  /**
   * A safety net, not a timeout: a session whose turn nobody ends (every process lost) is free
   * again after this long. Each change renews it; a confirmation waits 5 minutes at most.
   */
  turnTtlMs: 6 * 60 * 60 * 1000,
  /**
   * How long a release's answer is remembered, so that the same release sent again answers the
   * same: far longer than a client takes to resend after reconnecting (REDIS_COMMAND_RETRIES, ~5 s).
   */
  releaseMemoryMs: 60_000,
};

/*
 * Every script answers the same when it runs twice: a command whose answer was lost when the
 * connection dropped (a Redis restart) is sent again by ioredis once reconnected, and runs again.
 */

/**
 * One hash per busy session: turn_id, phase, state, pending (JSON), accepted_at. A claim by the turn
 * that holds the session and is still queued is that same claim sent again: granted.
 */
const CLAIM = `
local owner = redis.call('HMGET', KEYS[1], 'turn_id', 'phase')
if owner[1] then
  if owner[1] == ARGV[1] and owner[2] == 'queued' then return 1 end
  return 0
end
redis.call('HSET', KEYS[1], 'turn_id', ARGV[1], 'phase', 'queued', 'state', 'thinking', 'pending', '', 'accepted_at', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
`;

/** CLAIM, answering a refusal with the holder's hash (HGETALL's field/value list) instead of 0. */
const CLAIM_OR_HOLDER = CLAIM.replace('return 0', "return redis.call('HGETALL', KEYS[1])");

/** ARGV: turn id, ttl, then field/value pairs. A reservation (`handover`) is no turn to change. */
const UPDATE = `
local owner = redis.call('HMGET', KEYS[1], 'turn_id', 'phase')
if owner[1] ~= ARGV[1] or owner[2] == 'handover' then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV, 3))
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
`;

/**
 * ARGV: turn id, required phase ('' for any), this release's id, how long its answer is remembered,
 * now, the turn ttl. 0: not released; 1: released; 2: released, messages wait (the session is then
 * reserved for the next of them: phase `handover`, still named by this turn). KEYS[2] remembers the
 * last release's id and answer: the same release sent again gets that answer, not "not yours".
 */
const RELEASE = `
local owner = redis.call('HMGET', KEYS[1], 'turn_id', 'phase', 'waiting')
if owner[1] ~= ARGV[1] then
  local last = redis.call('GET', KEYS[2])
  if last and string.sub(last, 1, string.len(ARGV[3]) + 1) == ARGV[3] .. ' ' then return tonumber(string.sub(last, string.len(ARGV[3]) + 2)) end
  return 0
end
if owner[2] == 'handover' then return 2 end
if ARGV[2] ~= '' and owner[2] ~= ARGV[2] then return 0 end
redis.call('DEL', KEYS[1])
local released = 1
if owner[3] == '1' then
  released = 2
  redis.call('HSET', KEYS[1], 'turn_id', ARGV[1], 'phase', 'handover', 'state', 'idle', 'pending', '', 'accepted_at', ARGV[5])
  redis.call('PEXPIRE', KEYS[1], ARGV[6])
end
redis.call('SET', KEYS[2], ARGV[3] .. ' ' .. released, 'PX', ARGV[4])
return released
`;

/**
 * ARGV: the reserving turn, the next turn ('' to free), '1' when more wait behind it, now, the turn
 * ttl. 1 handed (also when sent again: the next turn holds it), 2 again (a message was marked
 * waiting since the reservation; nothing changed), 3 freed, 0 lost.
 */
const HAND_OVER = `
local owner = redis.call('HMGET', KEYS[1], 'turn_id', 'phase', 'waiting')
if owner[1] ~= ARGV[1] or owner[2] ~= 'handover' then
  if ARGV[2] ~= '' and owner[1] == ARGV[2] then return 1 end
  return 0
end
if ARGV[2] == '' then
  if owner[3] == '1' then return 2 end
  redis.call('DEL', KEYS[1])
  return 3
end
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'turn_id', ARGV[2], 'phase', 'queued', 'state', 'thinking', 'pending', '', 'accepted_at', ARGV[4])
if ARGV[3] == '1' or owner[3] == '1' then redis.call('HSET', KEYS[1], 'waiting', '1') end
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return 1
`;

/** Flags the running turn (if any) and answers its id and phase. */
const MARK_WAITING = `
local turn = redis.call('HMGET', KEYS[1], 'turn_id', 'phase')
if not turn[1] then return false end
redis.call('HSET', KEYS[1], 'waiting', '1')
return turn
`;

type RedisWithScripts = Redis & {
  turnClaim(key: string, turnId: string, acceptedAt: number, ttlMs: number): Promise<number>;
  turnClaimOrHolder(key: string, turnId: string, acceptedAt: number, ttlMs: number): Promise<number | string[]>;
  turnUpdate(key: string, turnId: string, ttlMs: number, ...fields: string[]): Promise<number>;
  turnRelease(
    key: string,
    releasedKey: string,
    turnId: string,
    phase: string,
    releaseId: string,
    memoryMs: number,
    now: number,
    ttlMs: number,
  ): Promise<number>;
  turnHandOver(key: string, from: string, to: string, more: string, now: number, ttlMs: number): Promise<number>;
  turnMarkWaiting(key: string): Promise<[string, string] | null>;
};

/** The scaled-out turn registry: Redis hashes changed only by scripts that check the turn id. */
export class RedisTurnRegistry implements TurnRegistry {
  readonly name = 'redis' as const;
  private readonly redis: RedisWithScripts;

  constructor(
    redis: Redis,
    private readonly prefix: string,
    private readonly limits = REDIS_TURN_REGISTRY_DEFAULTS,
  ) {
    redis.defineCommand('turnClaim', { numberOfKeys: 1, lua: CLAIM });
    redis.defineCommand('turnClaimOrHolder', { numberOfKeys: 1, lua: CLAIM_OR_HOLDER });
    redis.defineCommand('turnUpdate', { numberOfKeys: 1, lua: UPDATE });
    redis.defineCommand('turnRelease', { numberOfKeys: 2, lua: RELEASE });
    redis.defineCommand('turnMarkWaiting', { numberOfKeys: 1, lua: MARK_WAITING });
    redis.defineCommand('turnHandOver', { numberOfKeys: 1, lua: HAND_OVER });
    this.redis = redis as RedisWithScripts;
  }

  async claim(sessionId: string, turnId: string): Promise<boolean> {
    return (await this.redis.turnClaim(this.key(sessionId), turnId, Date.now(), this.limits.turnTtlMs)) === 1;
  }

  async claimOrHolder(sessionId: string, turnId: string): Promise<true | LiveTurn> {
    const answer = await this.redis.turnClaimOrHolder(this.key(sessionId), turnId, Date.now(), this.limits.turnTtlMs);
    if (answer === 1) return true;
    const fields = answer as string[];
    const hash: Record<string, string> = {};
    for (let index = 0; index + 1 < fields.length; index += 2) hash[fields[index]!] = fields[index + 1]!;
    const holder = parse(hash);
    // Refused means held: the script read the hash it refused on.
    if (!holder) throw new Error(`the turn registry refused a claim on session ${sessionId} without a holder`);
    return holder;
  }

  async get(sessionId: string): Promise<LiveTurn | null> {
    return parse(await this.redis.hgetall(this.key(sessionId)));
  }

  async getMany(sessionIds: readonly string[]): Promise<Map<string, LiveTurn>> {
    const found = new Map<string, LiveTurn>();
    if (sessionIds.length === 0) return found;
    const pipeline = this.redis.pipeline();
    for (const id of sessionIds) pipeline.hgetall(this.key(id));
    const results = (await pipeline.exec()) ?? [];
    results.forEach(([error, hash], index) => {
      if (error) throw error;
      const turn = parse(hash as Record<string, string>);
      if (turn) found.set(sessionIds[index]!, turn);
    });
    return found;
  }

  async update(sessionId: string, turnId: string, change: LiveTurnChange): Promise<boolean> {
    const fields: string[] = [];
    if (change.phase !== undefined) fields.push('phase', change.phase);
    if (change.state !== undefined) fields.push('state', change.state);
    if (change.pending !== undefined) fields.push('pending', change.pending ? JSON.stringify(change.pending) : '');
    if (change.workflowId !== undefined) fields.push('workflow_id', change.workflowId ?? '');
    if (fields.length === 0) return (await this.get(sessionId))?.turnId === turnId;
    return (await this.redis.turnUpdate(this.key(sessionId), turnId, this.limits.turnTtlMs, ...fields)) === 1;
  }

  async markWaiting(sessionId: string): Promise<{ turnId: string; phase: LiveTurn['phase'] } | null> {
    const turn = await this.redis.turnMarkWaiting(this.key(sessionId));
    return turn ? { turnId: turn[0], phase: phaseOf(turn[1]) } : null;
  }

  async release(sessionId: string, turnId: string, onlyIf?: 'queued' | 'running'): Promise<false | { waiting: boolean }> {
    const released = await this.redis.turnRelease(
      this.key(sessionId),
      this.releasedKey(sessionId),
      turnId,
      onlyIf ?? '',
      randomUUID(),
      this.limits.releaseMemoryMs,
      Date.now(),
      this.limits.turnTtlMs,
    );
    return released === 0 ? false : { waiting: released === 2 };
  }

  async handOver(sessionId: string, from: string, to: string | null, more: boolean): Promise<HandOver> {
    const answer = await this.redis.turnHandOver(this.key(sessionId), from, to ?? '', more ? '1' : '0', Date.now(), this.limits.turnTtlMs);
    return HAND_OVER_ANSWERS[answer] ?? 'lost';
  }

  async close(): Promise<void> {
    // The connection belongs to the caller.
  }

  private key(sessionId: string): string {
    return redisKey(this.prefix, 'turn', sessionId);
  }

  private releasedKey(sessionId: string): string {
    return redisKey(this.prefix, 'turn', sessionId, 'released');
  }
}

const HAND_OVER_ANSWERS: Record<number, HandOver> = { 0: 'lost', 1: 'handed', 2: 'again', 3: 'freed' };

function phaseOf(value: string | undefined): LiveTurn['phase'] {
  return value === 'running' || value === 'handover' ? value : 'queued';
}

function parse(hash: Record<string, string>): LiveTurn | null {
  if (!hash.turn_id) return null;
  const state = (AGENT_STATES as readonly string[]).includes(hash.state ?? '') ? (hash.state as AgentState) : 'thinking';
  return {
    turnId: hash.turn_id,
    phase: phaseOf(hash.phase),
    state,
    pending: hash.pending ? (JSON.parse(hash.pending) as PendingConfirmation) : null,
    acceptedAt: Number(hash.accepted_at ?? 0),
    ...(hash.workflow_id !== undefined ? { workflowId: hash.workflow_id || null } : {}),
  };
}
