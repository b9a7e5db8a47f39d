import type { Redis } from 'ioredis';

/**
 * One script per batch of appends to a session (the frames one tick produced: a burst of tokens),
 * so numbering, storing and publishing happen in one step and every process sees a session's frames
 * in seq order. The batch is one text: each frame's JSON with the byte 0x01 where its seq goes (JSON
 * text never holds a raw control character), the frames joined by newlines (nor a raw newline). The
 * script takes the batch's seqs from the counter and keeps the text as it is, as **one stream entry**
 * whose id is the first frame's seq (`<seq>-0`), and publishes `<first seq>\n<text>` on the live
 * tail; readers write each frame's seq in (the first frame's, then one more each). So Redis does no
 * work per frame: one XADD a batch, not one a frame, and no Lua string work per frame (per-frame
 * XADDs, then writing the seqs in Lua, were most of Redis's CPU on a long stream).
 * An entry holds at most `maxBatch` frames, so the frames after seq N are in the entries from
 * `N + 2 - maxBatch` on. Trimming drops the entries before the one holding the oldest of the last
 * `maxFramesPerSession` frames (MINID: Redis 6.2 or newer). The counter lives `counterTtlMs` after
 * the last append (ARGV[4]).
 *
 * A script that runs twice appends once: a command whose answer was lost when the connection
 * dropped (Redis restarted after running it) is sent again by ioredis once reconnected and runs
 * again, which stored its frames twice, under new seqs (a client saw a token or a `done` twice). Each
 * append carries an id (ARGV[6]) unique to it; the session's recent append ids and their first seqs
 * are kept in KEYS[4] (`;<id>=<first seq>`, newest first, `resendMemoryMs`, at most
 * `RECENT_APPENDS_BYTES`), and an id found there answers its first seq without appending again.
 * ARGV: max frames kept, ttl, count, counter ttl, the batch's text, the append id, the recent ids'
 * ttl. Returns the first seq.
 */
const RECENT_APPENDS_BYTES = 1024;
const APPEND_SCRIPT = `
local append_key = ';' .. ARGV[6] .. '='
local recent = redis.call('GET', KEYS[4]) or ''
local seen = string.find(recent, append_key, 1, true)
if seen then
  local from = seen + #append_key
  return tonumber(string.sub(recent, from, (string.find(recent, ';', from, true) or (#recent + 1)) - 1))
end
local count = tonumber(ARGV[3])
local first = redis.call('INCRBY', KEYS[1], count) - count + 1
redis.call('PEXPIRE', KEYS[1], ARGV[4])
-- %d: Lua's own number to text switches to exponents (1e+14) long before seqs stop being integers.
local first_text = string.format('%d', first)
-- Newest first; what outgrows the bound goes whole (every entry starts with ';').
recent = append_key .. first_text .. recent
if #recent > ${RECENT_APPENDS_BYTES} then recent = string.match(string.sub(recent, 1, ${RECENT_APPENDS_BYTES}), '^(.*);') end
redis.call('SET', KEYS[4], recent, 'PX', ARGV[7])
local id = first_text .. '-0'
-- Entries before the one holding the oldest frame to keep go: this batch's, or an earlier one.
local keep_from = first + count - tonumber(ARGV[1])
local min_id = nil
if keep_from >= first then
  min_id = id
elseif keep_from > 1 then
  local holder = redis.call('XREVRANGE', KEYS[2], string.format('%d', keep_from) .. '-0', '-', 'COUNT', 1)[1]
  if holder then min_id = holder[1] end
end
if min_id then
  redis.call('XADD', KEYS[2], 'MINID', '~', min_id, id, 'f', ARGV[5])
else
  redis.call('XADD', KEYS[2], id, 'f', ARGV[5])
end
redis.call('PEXPIRE', KEYS[2], ARGV[2])
redis.call('PUBLISH', KEYS[3], first_text .. '\\n' .. ARGV[5])
return first
`;

/**
 * Raises the counter to ARGV[1] when the client is ahead (the counter was lost or expired), returns
 * the counter. A connection counts as activity: the counter lives ARGV[2] ms from now.
 */
const RAISE_SCRIPT = `
local current = tonumber(redis.call('GET', KEYS[1]) or '0')
local wanted = tonumber(ARGV[1])
if wanted > current then
  redis.call('SET', KEYS[1], ARGV[1]) -- the client's digits as given (a Lua number would be written 1.1e+15)
end
if wanted > current or current > 0 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return current
`;

/** A connection with the event log's scripts defined on it (`defineEventLogScripts`). */
export type RedisWithScripts = Redis & {
  eventLogAppend(
    seqKey: string,
    streamKey: string,
    channel: string,
    recentKey: string,
    maxLen: number,
    ttlMs: number,
    count: number,
    counterTtlMs: number,
    text: string,
    appendId: string,
    resendMemoryMs: number,
  ): Promise<number>;
  eventLogRaise(seqKey: string, afterSeq: number, counterTtlMs: number): Promise<number>;
};

/** Defines the event log's scripts on `redis` (ioredis sends each by its hash, the text once). */
export function defineEventLogScripts(redis: Redis): RedisWithScripts {
  redis.defineCommand('eventLogAppend', { numberOfKeys: 4, lua: APPEND_SCRIPT });
  redis.defineCommand('eventLogRaise', { numberOfKeys: 1, lua: RAISE_SCRIPT });
  return redis as RedisWithScripts;
}
