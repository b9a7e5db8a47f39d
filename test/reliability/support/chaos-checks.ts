import { Client } from 'pg';
import type { ResilientSession } from './chaos-client';
import type { EffectServer } from './chaos-model';

/** One turn a chaos client sent, and what it expects of it. */
export interface SentTurn {
  session: ResilientSession;
  key: string;
  /** The stored user message's id (null: sending never got a 202, so nothing was accepted). */
  turnId: string | null;
  /** The turn runs a side-effecting tool (run_command → the effect server). */
  tool: boolean;
}

export interface ChaosVerdict {
  /** Every broken promise, one line each (empty: all kept). */
  failures: string[];
  turns: number;
  done: number;
  /** Turns that ended in a terminal `error` (allowed, counted). */
  errors: { key: string; code: string }[];
}

/**
 * The promises of the chaos runs, checked against the database and what the clients saw: no
 * accepted message lost (stored once, answered or ended with an error the client saw), no
 * duplicate AI message (one reply per message at most, one `done` per turn, the same text), no side
 * effect run twice, every frame seen once and in order.
 */
export async function verifyTurns(databaseUrl: string, turns: SentTurn[], effects: EffectServer): Promise<ChaosVerdict> {
  const failures: string[] = [];
  const errors: { key: string; code: string }[] = [];
  let done = 0;
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const sessions = [...new Set(turns.map((turn) => turn.session))];
    for (const session of sessions) {
      failures.push(...session.violations.map((violation) => `frame order: ${violation}`));
      failures.push(...session.unsent.map((text) => `never accepted: ${text}`));
      const { rows } = await client.query<{ id: string; role: string; content: string; reply_to: string | null; turn_id: string | null }>(
        'SELECT id, role, content, reply_to, turn_id FROM messages WHERE session_id = $1 ORDER BY ordinal',
        [session.sessionId],
      );
      const accepted = turns.filter((turn) => turn.session === session && turn.turnId !== null);
      const users = rows.filter((row) => row.role === 'user');
      if (users.length !== accepted.length) failures.push(`${session.sessionId}: ${accepted.length} messages accepted, ${users.length} stored`);
      for (const turn of accepted) {
        const id = turn.turnId!;
        if (!users.some((row) => row.id === id)) failures.push(`${turn.key}: accepted message ${id} is not stored`);
        const replies = rows.filter((row) => row.role === 'assistant' && row.reply_to === id);
        const frames = session.turnFrames(id);
        const dones = frames.filter((frame) => frame.type === 'done');
        const ends = frames.filter((frame) => frame.type === 'error' && frame.payload.code !== 'WORKER_UNAVAILABLE');
        if (replies.length > 1) failures.push(`${turn.key}: ${replies.length} AI replies stored`);
        if (dones.length > 1) failures.push(`${turn.key}: ${dones.length} done frames`);
        if (dones.length === 1) {
          done += 1;
          const reply = replies[0];
          if (!reply) failures.push(`${turn.key}: done but no reply stored`);
          else if (reply.content !== dones[0]!.payload.text || reply.id !== dones[0]!.payload.message_id)
            failures.push(`${turn.key}: done says ${JSON.stringify(dones[0]!.payload.text)}, stored ${JSON.stringify(reply.content)}`);
          if (!dones[0]!.payload.text.includes(`Answer for ${turn.key}:`))
            failures.push(`${turn.key}: unexpected answer ${JSON.stringify(dones[0]!.payload.text)}`);
          if (ends.length > 0) failures.push(`${turn.key}: both done and error ${ends[0]!.payload.code}`);
          // Killed between its claim and its effect, a call is not run again (at most once): the
          // turn says so ("outcome unknown") and the effect may not have happened.
          const unknown = frames.some((frame) => frame.type === 'tool_end' && /already started before an interruption/.test(String(frame.payload.error)));
          if (turn.tool && effects.count(turn.key) !== 1 && !(unknown && effects.count(turn.key) === 0))
            failures.push(`${turn.key}: side effect ran ${effects.count(turn.key)} times`);
        } else if (ends.length > 0) {
          errors.push({ key: turn.key, code: ends.at(-1)!.payload.code });
          if (replies.length > 0) failures.push(`${turn.key}: ended in error but a reply is stored`);
        } else {
          failures.push(`${turn.key}: never ended (no done, no error)`);
        }
        if (effects.count(turn.key) > 1) failures.push(`${turn.key}: side effect ran ${effects.count(turn.key)} times`);
      }
    }
  } finally {
    await client.end();
  }
  return { failures: [...new Set(failures)], turns: turns.length, done, errors };
}

/** Percentile (0–100) of a list of numbers, nearest rank. */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}
