import { randomUUID } from 'node:crypto';
import type { SessionFrame, SessionFrameBody } from '../../src/core/events';
import { frameTimestamp, FrameTextMaker } from '../../src/events/frame-text';
import { InProcessEventLog } from '../../src/events/in-process-event-log';

const turnId = randomUUID();
const bodies: SessionFrameBody[] = [
  { type: 'agent_state', payload: { state: 'thinking', turn_id: turnId } },
  { type: 'token', payload: { text: 'Hel', final: false, turn_id: turnId } },
  { type: 'token', payload: { text: 'lo "you" \\ \n\u0001 é 🎉 \u2028', final: false, turn_id: turnId } },
  { type: 'token', payload: { text: '', final: true, turn_id: turnId } },
  { type: 'done', payload: { turn_id: turnId, message_id: randomUUID(), usage: { input_tokens: 3, output_tokens: 4 } } },
] as unknown as SessionFrameBody[];

/** The frame as the spec's envelope, serialised whole (what every socket used to be sent). */
const whole = (sessionId: string, body: SessionFrameBody, seq: number, ts: string) =>
  JSON.stringify({ type: body.type, session_id: sessionId, payload: body.payload, seq, ts });

describe("a frame's JSON made from its parts", () => {
  it('is the JSON of the whole frame, in the envelope order, whatever session and type came before', () => {
    const maker = new FrameTextMaker();
    const sessions = [randomUUID(), randomUUID()];
    const ts = new Date().toISOString();
    let seq = 0;
    for (const round of [0, 1]) {
      for (const body of bodies) {
        for (const sessionId of round === 0 ? sessions : [sessions[1]!, sessions[1]!, sessions[0]!]) {
          seq += 1;
          expect(maker.text(sessionId, body, seq, ts)).toBe(whole(sessionId, body, seq, ts));
        }
      }
    }
    expect(JSON.parse(maker.text(sessions[0]!, bodies[1]!, 7, ts))).toEqual({
      type: 'token',
      session_id: sessions[0],
      payload: bodies[1]!.payload,
      seq: 7,
      ts,
    });
  });

  it('is what the in-process log hands its listeners, frame by frame', async () => {
    const log = new InProcessEventLog();
    const sessions = [randomUUID(), randomUUID()];
    const heard: [SessionFrame, string][] = [];
    for (const sessionId of sessions) await log.subscribe(sessionId, { onFrame: (frame, text) => heard.push([frame, text]) });
    for (const body of bodies) {
      await log.append(sessions[0]!, body);
      await log.appendAll(sessions[1]!, [body, body]);
    }
    expect(heard).toHaveLength(bodies.length * 3);
    for (const [frame, text] of heard) expect(text).toBe(JSON.stringify(frame));
    await log.close();
  });
});

describe("a frame's timestamp", () => {
  afterEach(() => jest.useRealTimers());

  it('is the ISO time of the current millisecond, made again when the clock moves either way', () => {
    jest.useFakeTimers();
    const start = Date.parse('2026-11-29T12:00:00.123Z');
    jest.setSystemTime(start);
    expect(frameTimestamp()).toBe('2026-11-29T12:00:00.123Z');
    expect(frameTimestamp()).toBe('2026-11-29T12:00:00.123Z');
    jest.setSystemTime(start + 1);
    expect(frameTimestamp()).toBe('2026-11-29T12:00:00.124Z');
    jest.setSystemTime(start - 60_000); // a clock set back
    expect(frameTimestamp()).toBe('2026-11-29T11:59:00.123Z');
  });
});
