import { randomUUID } from 'node:crypto';
import type { AgentEvent, SessionFrame } from '../../src/core/events';
import { InProcessEventLog } from '../../src/events/in-process-event-log';
import { InProcessTurnRegistry } from '../../src/events/in-process-turn-registry';
import { RedisEventLog } from '../../src/events/redis-event-log';
import { createLogger } from '../../src/logs/logger';
import { createRedis } from '../../src/redis/connection';
import { TurnEvents } from '../../src/turns/turn-events';
import { LogCapture } from '../helpers/log-capture';
import { TEST_REDIS_URL, uniquePrefix } from '../helpers/redis';

/**
 * A turn's events on their way to the log: one by one (`send`) or a streamed read's at once
 * (`sendAll`), noted the same way either way (first token, open tool calls, working state).
 */
const token = (text: string): AgentEvent => ({ type: 'token', payload: { text, final: false } });

async function turn() {
  const events = new InProcessEventLog();
  const registry = new InProcessTurnRegistry();
  const sessionId = randomUUID();
  const turnId = randomUUID();
  await registry.claim(sessionId, turnId);
  const frames: SessionFrame[] = [];
  await events.subscribe(sessionId, (frame) => frames.push(frame));
  let firstTokens = 0;
  const sent = new TurnEvents({ events, registry }, sessionId, turnId, () => (firstTokens += 1));
  return { events, registry, sessionId, turnId, frames, sent, firstTokens: () => firstTokens };
}

describe('TurnEvents', () => {
  it('sends a read of events as one append, in order, each with the turn id, among single sends', async () => {
    const { sent, frames, turnId, events } = await turn();
    await sent.send({ type: 'agent_state', payload: { state: 'thinking' } });
    await sent.sendAll([{ type: 'agent_state', payload: { state: 'writing' } }, token('a'), token('b')]);
    await sent.sendAll([token('c')]);
    await sent.sendAll([]);
    await sent.flush();
    expect(
      frames.map((frame) => [frame.seq, frame.type, (frame.payload as { text?: string; state?: string }).text ?? (frame.payload as { state: string }).state]),
    ).toEqual([
      [1, 'agent_state', 'thinking'],
      [2, 'agent_state', 'writing'],
      [3, 'token', 'a'],
      [4, 'token', 'b'],
      [5, 'token', 'c'],
    ]);
    expect(frames.every((frame) => (frame.payload as { turn_id?: string }).turn_id === turnId)).toBe(true);
    await events.close();
  });

  it('notes a read the way it notes single events: the first token once, open tool calls, the working state', async () => {
    const { sent, registry, sessionId, firstTokens, events } = await turn();
    await sent.sendAll([
      { type: 'tool_start', payload: { tool_call_id: 'call-1', tool_name: 'search', input: {} } },
      { type: 'tool_start', payload: { tool_call_id: 'call-2', tool_name: 'fetch', input: {} } },
      { type: 'tool_end', payload: { tool_call_id: 'call-1', tool_name: 'search', duration_ms: 1, error: null } },
    ]);
    expect(sent.openToolCalls().map((call) => call.toolCallId)).toEqual(['call-2']);
    expect(firstTokens()).toBe(0);
    await sent.sendAll([{ type: 'agent_state', payload: { state: 'writing' } }, token('a'), token('b')]);
    await sent.send(token('c'));
    expect(firstTokens()).toBe(1);
    await sent.flush();
    expect((await registry.get(sessionId))?.state).toBe('writing');
    await events.close();
  });

  it('sends nothing once the frames that end the turn went out', async () => {
    const { sent, frames, events } = await turn();
    await sent.sendLast([{ type: 'agent_state', payload: { state: 'idle' } }]);
    await sent.sendAll([token('late'), token('later')]);
    await sent.flush();
    expect(frames.map((frame) => frame.type)).toEqual(['agent_state']);
    await events.close();
  });

  it('reports a read that could not be appended when flushed', async () => {
    const logger = createLogger({ level: 'warn', format: 'json', name: 'test', destination: new LogCapture() });
    const redis = createRedis(TEST_REDIS_URL, logger, 'events');
    const subscriber = createRedis(TEST_REDIS_URL, logger, 'events-sub');
    const events = new RedisEventLog(redis, subscriber, uniquePrefix('turn-events'));
    redis.disconnect(); // the log's connection is gone: the script cannot run
    const sent = new TurnEvents({ events, registry: new InProcessTurnRegistry() }, randomUUID(), randomUUID());
    await sent.sendAll([token('a'), token('b')]);
    await expect(sent.flush()).rejects.toThrow(/closed|connect/i);
    subscriber.disconnect();
  });
});
