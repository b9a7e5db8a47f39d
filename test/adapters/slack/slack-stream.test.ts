import { webApi } from '@slack/bolt';
import pino from 'pino';
import type { SessionFrame, SessionFrameBody } from '../../../src/core/events';
import type { TurnOutcome } from '../../../src/core/follow-turn';
import { slackSurface, type ReplyTarget } from '../../../adapters/slack/render';
import { TurnPresenter } from '../../../adapters/shared/turn-presenter';
import { SlackOutbox, webClientOptions } from '../../../adapters/slack/slack-outbox';
import { FakeSlackApi } from '../../fakes/slack-api';
import { LogCapture } from '../../helpers/log-capture';

/**
 * Slack replies, shown by the shared presenter on the real Slack reply surface, through the real Web API client and send budget
 * into the fake Slack: native streams in threads, the edit fallback, thread status, Retry-After.
 */
let slack: FakeSlackApi;
let client: webApi.WebClient;
let logs: LogCapture;
let seq = 0;

const GENEROUS = { perChat: { limit: 50, windowMs: 1_000 }, global: { limit: 500, windowMs: 1_000 } };
const OPTIONS = { editIntervalMs: 40, nativeStreaming: true, threadStatus: true };
const APOLOGY = 'Sorry, something went wrong while answering. Please try again in a moment.';

beforeAll(async () => {
  slack = new FakeSlackApi();
  await slack.start();
  client = new webApi.WebClient('xoxb-test', { ...webClientOptions(slack.url), retryConfig: { retries: 0 } });
});

afterAll(async () => {
  await slack.stop();
});

beforeEach(() => {
  logs = new LogCapture();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const frame = (body: SessionFrameBody): SessionFrame => ({ ...body, session_id: 'S1', seq: ++seq, ts: new Date().toISOString() }) as SessionFrame;
const token = (text: string) => frame({ type: 'token', payload: { text, final: false, turn_id: 'T' } });
const state = (name: 'thinking' | 'writing') => frame({ type: 'agent_state', payload: { state: name, turn_id: 'T' } });
const done = (text: string): TurnOutcome => ({
  kind: 'done',
  done: { message_id: 'm1', total_tokens: 1, input_tokens: 1, output_tokens: 1, duration_ms: 1, tool_calls: 0, text },
});
const thread = (channel: string, threadTs = `1710000000.${String(++seq).padStart(6, '0')}`): ReplyTarget => ({
  channel,
  threadTs,
  recipient: { userId: 'U1', teamId: 'T1' },
});

/** One turn in Slack: frames in (`handle`), its ending (`finish`), and `settled` once every call went out. */
interface TurnRenderer {
  handle(frame: SessionFrame): void;
  finish(outcome: TurnOutcome): void;
  settled(): Promise<void>;
}

function renderer(
  target: ReplyTarget,
  outbox = new SlackOutbox(GENEROUS, pino({ level: 'debug' }, logs)),
  options: Partial<typeof OPTIONS> = {},
): TurnRenderer {
  const logger = pino({ level: 'debug' }, logs);
  const presenter = new TurnPresenter(slackSurface(outbox.calls(client, 'T1'), target, { ...OPTIONS, ...options, logger }), {
    logger,
    channel: 'slack',
    sessionId: 'S1',
  });
  return { handle: (frame) => presenter.frame(frame), finish: (outcome) => void presenter.end(outcome), settled: () => presenter.settled() };
}

/** Plays a turn: thinking, the tokens (with a pause after each, so interim sends happen), then the outcome. */
async function play(turn: TurnRenderer, tokens: string[], outcome: TurnOutcome, pauseMs = 60): Promise<void> {
  turn.handle(state('thinking'));
  for (const text of tokens) {
    turn.handle(token(text));
    await sleep(pauseMs);
  }
  turn.finish(outcome);
  await turn.settled();
}

const callsIn = (channel: string) => slack.calls.filter((call) => (call.args.channel ?? call.args.channel_id) === channel).map((call) => call.method);

describe('native streaming in a thread', () => {
  it('streams the reply with start, appends and stop, and the message reads the whole answer', async () => {
    const target = thread('C-stream');
    await play(renderer(target), ['Hello', ' there', ', friend', '.'], done('Hello there, friend.'));

    const methods = callsIn('C-stream').filter((method) => method.startsWith('chat.'));
    expect(methods[0]).toBe('chat.startStream');
    expect(methods.at(-1)).toBe('chat.stopStream');
    expect(methods.filter((method) => method === 'chat.appendStream').length).toBeGreaterThanOrEqual(1);
    expect(methods).not.toContain('chat.postMessage');
    expect(methods).not.toContain('chat.update');
    const start = slack.callsOf('chat.startStream').find((call) => call.args.channel === 'C-stream')!;
    expect(start.args).toMatchObject({
      thread_ts: target.threadTs,
      recipient_user_id: 'U1',
      recipient_team_id: 'T1',
      markdown_text: expect.stringMatching(/^Hello/),
    });
    // It starts with the text so far (how much arrived before it went out depends on the machine's pace).
    expect('Hello there, friend.'.startsWith(start.args.markdown_text)).toBe(true);
    const [message] = slack.workspace.messagesIn('C-stream');
    expect(message).toMatchObject({ kind: 'stream', streaming: false, thread_ts: target.threadTs, text: 'Hello there, friend.' });
  });

  it('sends a long answer in pieces Slack accepts (12,000 characters each) and keeps mentions from pinging', async () => {
    const answer = `<!channel> ${'x'.repeat(29_000)}`;
    await play(renderer(thread('C-long')), [], done(answer));
    const [message] = slack.workspace.messagesIn('C-long');
    expect(message!.text).toBe(answer.replace('<!', '<\u200B!'));
    expect(slack.calls.filter((call) => call.args.channel === 'C-long').every((call) => (call.args.markdown_text ?? '').length <= 12_000)).toBe(true);
    expect(callsIn('C-long').filter((method) => method.startsWith('chat.'))).toEqual(['chat.startStream', 'chat.appendStream', 'chat.stopStream']);
  });

  it('replaces a streamed message with the apology when the turn fails', async () => {
    await play(renderer(thread('C-fail')), ['Half an ans'], { kind: 'error', code: 'INTERNAL_ERROR', message: 'db password=hunter2' });
    const [message] = slack.workspace.messagesIn('C-fail');
    expect(message).toMatchObject({ kind: 'stream', streaming: false, text: APOLOGY });
    expect(JSON.stringify(slack.calls)).not.toContain('hunter2');
  });

  it('posts the answer whole when Slack ended the stream underway', async () => {
    const turn = renderer(thread('C-ended'));
    turn.handle(state('thinking'));
    turn.handle(token('Hello'));
    await slack.waitFor((call) => call.method === 'chat.startStream' && call.args.channel === 'C-ended');
    await sleep(60);
    slack.workspace.messagesIn('C-ended')[0]!.streaming = false; // Slack's own stream timeout
    turn.handle(token(' there'));
    await sleep(80);
    turn.finish(done('Hello there.'));
    await turn.settled();
    const finished = slack.workspace.messagesIn('C-ended').filter((message) => message.text === 'Hello there.');
    expect(finished).toHaveLength(1);
    expect(finished[0]!.kind).toBe('post');
  });
});

describe('the edit fallback', () => {
  it.each(['unknown_method', 'not_allowed_token_type'])(
    'falls back to a posted, edited message when Slack answers %s, and remembers it for the workspace',
    async (code) => {
      slack.refuse('chat.startStream', code);
      try {
        const outbox = new SlackOutbox(GENEROUS, pino({ level: 'debug' }, logs));
        const channel = `C-refused-${code}`;
        await play(renderer(thread(channel), outbox), ['Hello', ' there.'], done('Hello there.'));
        expect(slack.workspace.messagesIn(channel).map((message) => [message.kind, message.text])).toEqual([['post', 'Hello there.']]);
        expect(callsIn(channel).filter((method) => method === 'chat.startStream')).toHaveLength(1);

        // The next turn in the same workspace does not ask again.
        const second = thread(channel);
        await play(renderer(second, outbox), ['Again.'], done('Again.'));
        expect(callsIn(channel).filter((method) => method === 'chat.startStream')).toHaveLength(1);
        expect(
          slack.workspace
            .messagesIn(channel)
            .filter((message) => message.thread_ts === second.threadTs)
            .map((message) => message.text),
        ).toEqual(['Again.']);
        // A refusal is not a failure: no apology, nothing logged as an error.
        expect(slack.workspace.messagesIn(channel).some((message) => message.text === APOLOGY)).toBe(false);
        expect(logs.entries().filter((entry) => (entry.level as number) >= 50)).toEqual([]);
        expect(logs.text).toContain(code);
      } finally {
        slack.allow('chat.startStream');
      }
    },
  );

  it('edits a message at the top level of a DM, where Slack does not stream', async () => {
    await play(renderer({ channel: 'D-top', threadTs: null, recipient: { userId: 'U1', teamId: 'T1' } }), ['Hello', ' there.'], done('Hello there.'));
    const methods = callsIn('D-top');
    expect(methods).not.toContain('chat.startStream');
    expect(methods[0]).toBe('chat.postMessage');
    expect(methods.at(-1)).toBe('chat.update');
    expect(slack.workspace.messagesIn('D-top').map((message) => message.text)).toEqual(['Hello there.']);
  });

  it('edits instead of streaming when native_streaming is off', async () => {
    await play(renderer(thread('C-off'), undefined, { nativeStreaming: false }), ['Hi.'], done('Hi.'));
    expect(callsIn('C-off')).not.toContain('chat.startStream');
    expect(slack.workspace.messagesIn('C-off').map((message) => [message.kind, message.text])).toEqual([['post', 'Hi.']]);
  });
});

describe('thread status', () => {
  it('says what the agent does while it thinks and runs a tool, and clears it at the end', async () => {
    const target = thread('C-status');
    const turn = renderer(target);
    turn.handle(state('thinking'));
    turn.handle(frame({ type: 'tool_start', payload: { tool_name: 'lookup', tool_call_id: 'c1', input: {}, turn_id: 'T' } }));
    turn.handle(frame({ type: 'tool_end', payload: { tool_name: 'lookup', tool_call_id: 'c1', duration_ms: 3, error: null, turn_id: 'T' } }));
    turn.handle(token('Found it.'));
    await sleep(80);
    turn.finish(done('Found it.'));
    await turn.settled();
    expect(slack.workspace.statusesOf('C-status', target.threadTs!)).toEqual(['is thinking…', 'is running lookup…', 'is thinking…', '']);
    expect(slack.workspace.messagesIn('C-status')[0]!.text).toBe('Found it.');
  });

  it('goes without a status where Slack refuses it, and stops asking', async () => {
    slack.refuse('assistant.threads.setStatus', 'missing_scope');
    try {
      const outbox = new SlackOutbox(GENEROUS, pino({ level: 'debug' }, logs));
      await play(renderer(thread('C-nostatus'), outbox), ['Hi.'], done('Hi.'));
      await play(renderer(thread('C-nostatus'), outbox), ['Hi again.'], done('Hi again.'));
      expect(slack.callsOf('assistant.threads.setStatus').filter((call) => call.args.channel_id === 'C-nostatus')).toHaveLength(1);
      expect(slack.workspace.messagesIn('C-nostatus').map((message) => message.text)).toEqual(['Hi.', 'Hi again.']);
    } finally {
      slack.allow('assistant.threads.setStatus');
    }
  });

  it('sets no status at the top level of a DM', async () => {
    await play(renderer({ channel: 'D-nostatus', threadTs: null, recipient: { userId: 'U1', teamId: 'T1' } }), ['Hi.'], done('Hi.'));
    expect(slack.callsOf('assistant.threads.setStatus').filter((call) => call.args.channel_id === 'D-nostatus')).toEqual([]);
  });
});

describe('Retry-After', () => {
  it('pauses only that channel for Retry-After after a 429, then sends again', async () => {
    const outbox = new SlackOutbox(GENEROUS, pino({ level: 'debug' }, logs));
    slack.rateLimitOnce('chat.startStream', 1);
    const limited = play(renderer(thread('C-429'), outbox), [], done('After the pause.'));
    const limitedCall = await slack.waitFor((call) => call.method === 'chat.startStream (429)');
    // Another channel is not held up by C-429's pause.
    await play(renderer(thread('C-free'), outbox), [], done('No pause here.'));
    const freeDone = Date.now();
    await limited;
    const retried = slack.callsOf('chat.startStream').find((call) => call.args.channel === 'C-429')!;
    expect(retried.at - limitedCall.at).toBeGreaterThanOrEqual(1_000);
    expect(freeDone).toBeLessThan(retried.at);
    expect(slack.workspace.messagesIn('C-429').map((message) => message.text)).toEqual(['After the pause.']);
    expect(logs.text).toContain('Slack answered 429');
  });
});

describe("an event delivery's first message", () => {
  it('is recorded before the surface goes on: no edit of it goes out until onPosted has resolved', async () => {
    const target: ReplyTarget = { channel: 'C-recorded', threadTs: null, recipient: { userId: '', teamId: 'T1' } };
    const logger = pino({ level: 'debug' }, logs);
    let release!: () => void;
    const recording = new Promise<void>((resolve) => (release = resolve));
    const recorded: string[] = [];
    const onPosted = async (ts: string | undefined) => {
      await recording; // a slow database write
      recorded.push(ts ?? '');
    };
    const surface = slackSurface(new SlackOutbox(GENEROUS, logger).calls(client, 'T1'), target, { ...OPTIONS, nativeStreaming: false, logger, onPosted });
    const presenter = new TurnPresenter(surface, { logger, channel: 'slack', sessionId: 'S1' });
    presenter.frame(state('thinking'));
    for (const text of ['Hello', ' there', ', friend']) {
      presenter.frame(token(text));
      await sleep(60);
    }
    await slack.waitFor((call) => call.method === 'chat.postMessage' && call.args.channel === 'C-recorded');
    await sleep(300); // several edit intervals: an edit would have gone out by now
    expect(callsIn('C-recorded')).not.toContain('chat.update');
    release();
    void presenter.end(done('Hello there, friend.'));
    await presenter.settled();
    const [message] = slack.workspace.messagesIn('C-recorded');
    expect(recorded).toEqual([message!.ts]);
    expect(message!.text).toBe('Hello there, friend.');
    expect(callsIn('C-recorded')).toContain('chat.update');
  });
});
