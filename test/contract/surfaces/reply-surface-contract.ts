import pino from 'pino';
import type { ReplySurface } from '../../../adapters/shared/reply-surface';
import { TurnPresenter } from '../../../adapters/shared/turn-presenter';
import { CONFIRM_ACTIONS, type AgentEvent, type SessionFrame } from '../../../src/core/events';
import type { TurnOutcome } from '../../../src/core/follow-turn';

/**
 * The fast layer of the channel contract: no hub, no network. A scripted turn's frames are fed to the
 * shared presenter (adapters/shared/turn-presenter.ts) on one channel's reply surface, whose platform
 * calls land in a recording of that platform (its messages as a person would see them). Every chat
 * channel runs the same scripted turns (test/contract/reply-surfaces.test.ts); a channel added to the
 * registry adds a harness here. The whole-hub layer is test/contract/channel-adapters.test.ts.
 */
export interface SurfaceHarness {
  /** The channel's name (a registry name, or a test's own channel). */
  readonly name: string;
  /** A reply surface for a new conversation's message, and what that conversation shows. */
  conversation(): SurfaceConversation;
}

export interface SurfaceConversation {
  readonly surface: ReplySurface;
  /** The messages the person sees now, in order, as they read (the current text of edited ones). */
  shown(): string[];
  /** The actions offered by the last confirmation asked (null: asked as text, without buttons). */
  offered(): string[] | null;
  /** Whether the chat showed that the agent was working (typing, a status line) at any point. */
  showedWork(): boolean;
}

const SESSION = '7c9e6679-7425-40de-944b-e07fc1f90ae7';
const TURN = '9b2a3f10-51f7-4c27-a1ab-8d3bd0c6f1e2';
const ANSWER = 'Hello there, friend.';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A long answer: paragraphs of words, far past one Telegram message (4,096) and in several Slack appends. */
export const LONG_ANSWER = Array.from({ length: 14 }, (_, paragraph) => Array.from({ length: 120 }, (_, word) => `p${paragraph}w${word}`).join(' ')).join(
  '\n\n',
);

let seq = 0;
const frame = (event: AgentEvent): SessionFrame =>
  ({ ...event, payload: { ...event.payload, turn_id: TURN }, session_id: SESSION, seq: ++seq, ts: new Date().toISOString() }) as SessionFrame;
const state = (name: 'thinking' | 'writing') => frame({ type: 'agent_state', payload: { state: name } });
const token = (text: string) => frame({ type: 'token', payload: { text, final: false } });
const done = (text: string): TurnOutcome => ({
  kind: 'done',
  done: { message_id: 'm1', total_tokens: 1, input_tokens: 1, output_tokens: 1, duration_ms: 1, tool_calls: 0, text },
});
const words = (text: string) => text.split(/\s+/).filter(Boolean);

/** Plays frames (with a pause after each token, so interim updates happen), then the outcome. */
async function play(surface: ReplySurface, frames: SessionFrame[], outcome: TurnOutcome): Promise<void> {
  const presenter = new TurnPresenter(surface, { logger: pino({ level: 'silent' }), channel: 'contract', sessionId: SESSION, turnId: TURN });
  for (const next of frames) {
    presenter.frame(next);
    if (next.type === 'token') await sleep(30);
  }
  await presenter.end(outcome);
}

/** The scripted turns, run on `harness`'s reply surface. */
export function replySurfaceContract(harness: SurfaceHarness): void {
  describe(`reply surface contract (${harness.name})`, () => {
    it('shows a plain answer, and that the agent worked on it', async () => {
      const chat = harness.conversation();
      await play(chat.surface, [state('thinking'), state('writing'), token('Hello'), token(' there'), token(', friend'), token('.')], done(ANSWER));
      expect(chat.shown().at(-1)).toBe(ANSWER);
      expect(chat.showedWork()).toBe(true);
    });

    it('splits a long answer within the message limit, losing no word', async () => {
      const chat = harness.conversation();
      await play(chat.surface, [state('thinking'), token(LONG_ANSWER.slice(0, 3000)), token(LONG_ANSWER.slice(3000))], done(LONG_ANSWER));
      const shown = chat.shown();
      expect(words(shown.join(' '))).toEqual(words(LONG_ANSWER));
      const limit = chat.surface.cadence.maxMessageChars;
      if (limit !== undefined) expect(shown.every((text) => text.length <= limit)).toBe(true);
    });

    it('shows tool progress, then the answer', async () => {
      const chat = harness.conversation();
      const call = { tool_name: 'lookup', tool_call_id: 'c1' };
      await play(
        chat.surface,
        [
          state('thinking'),
          frame({ type: 'tool_start', payload: { ...call, input: {} } }),
          frame({ type: 'tool_end', payload: { ...call, duration_ms: 3, error: null } }),
          token('Found it.'),
        ],
        done('Found it.'),
      );
      expect(chat.showedWork()).toBe(true);
      expect(chat.shown().at(-1)).toBe('Found it.');
    });

    it('asks for a confirmation (the six actions where it offers buttons) and, answered, shows the answer after it', async () => {
      const chat = harness.conversation();
      const request = frame({
        type: 'tool_confirm_request',
        payload: { confirmation_id: '2c5ea4c0-4067-11e9-8bad-9b1deb4d3b7d', tool: 'save_note', parameters: { text: 'x' }, message: 'Save a note?' },
      });
      const call = { tool_name: 'save_note', tool_call_id: 'c2' };
      await play(
        chat.surface,
        [
          state('thinking'),
          request,
          frame({ type: 'tool_start', payload: { ...call, input: {} } }),
          frame({ type: 'tool_end', payload: { ...call, duration_ms: 1, error: null } }),
          token('Saved it.'),
        ],
        done('Saved it.'),
      );
      const offered = chat.offered();
      if (offered !== null) expect(offered).toEqual([...CONFIRM_ACTIONS]);
      const shown = chat.shown();
      expect(shown.some((text) => text.includes('save_note') || text.includes('Save a note?'))).toBe(true);
      expect(shown.at(-1)).toBe('Saved it.');
    });

    it('says a cancelled turn was cancelled, last', async () => {
      const chat = harness.conversation();
      await play(chat.surface, [state('thinking'), token('Half an ans')], { kind: 'cancelled' });
      expect(chat.shown().at(-1)).toBe(chat.surface.cadence.texts.cancelled);
    });

    it('shows a failed turn as the apology, never the error', async () => {
      const chat = harness.conversation();
      await play(
        chat.surface,
        [state('thinking'), token('Partial'), frame({ type: 'error', payload: { code: 'INTERNAL_ERROR', message: 'password hunter2' } })],
        { kind: 'error', code: 'INTERNAL_ERROR', message: 'password hunter2' },
      );
      expect(chat.shown().at(-1)).toBe(chat.surface.cadence.texts.apology);
      expect(chat.shown().some((text) => text.includes('hunter2'))).toBe(false);
    });

    it.each<TurnOutcome>([{ kind: 'merged', into: 'other-turn' }, { kind: 'dropped' }])(
      'shows nothing for a message whose turn ended $kind',
      async (outcome) => {
        const chat = harness.conversation();
        await play(chat.surface, [], outcome);
        expect(chat.shown()).toEqual([]);
      },
    );
  });
}
