import { webchatSettingsSchema } from '../../../adapters/webchat';
import { HeldMessages } from '../../../adapters/webchat/held-messages';
import { DistinctWindow, SlidingWindow } from '../../../adapters/webchat/limits';
import { confirmPayload, contactTags, parseConfirmPayload, toInbound } from '../../../adapters/webchat/normalize';
import { sanitizeMarkdown, takeParagraphs, textMessages } from '../../../adapters/webchat/render';
import { SessionIds } from '../../../adapters/webchat/session-ids';
import pino from 'pino';
import { TurnPresenter } from '../../../adapters/shared/turn-presenter';
import { widgetSurface, type WidgetOutput, type WidgetSurfaceOptions } from '../../../adapters/webchat/widget-surface';
import type { AgentEvent, SessionFrame } from '../../../src/core/events';
import type { TurnOutcome } from '../../../src/core/follow-turn';
import type { RenderLeases } from '../../../src/core/render-lease';
import { InProcessRenderLeases } from '../../../src/events/in-process-render-leases';

/** The webchat adapter's pure parts: what it makes of frames, text, ids and counters. */

let seq = 0;
const frame = (event: AgentEvent): SessionFrame => ({ ...event, session_id: 's', seq: seq++, ts: '' }) as SessionFrame;
type Output = WidgetOutput | { kind: 'refuse'; confirmationId: string; tool: string };
const said = (outputs: Output[]) => outputs.flatMap((output) => (output.kind === 'say' ? [output.message] : []));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * One turn as the widget shows it: the shared presenter on the widget's reply surface. `push` and
 * `finish` answer what the widget was sent for that frame or ending (once its interim update ran).
 */
class TurnRenderer {
  readonly outputs: Output[] = [];
  private readonly presenter: TurnPresenter;

  constructor(
    options: Pick<WidgetSurfaceOptions, 'stream' | 'confirmations'>,
    lease?: { leases: RenderLeases; chat: string },
    deliver?: (output: WidgetOutput) => void,
  ) {
    const surface = widgetSurface({
      ...options,
      deliver: (output) => (deliver ?? ((item) => this.outputs.push(item)))(output),
      refuse: async (_session, request) => void this.outputs.push({ kind: 'refuse', confirmationId: request.confirmation_id, tool: request.tool }),
    });
    const take = lease ? (ticket: number) => lease.leases.acquire(lease.chat, String(Math.random()), ticket) : undefined;
    this.presenter = new TurnPresenter(surface, { logger: pino({ level: 'silent' }), channel: 'webchat', sessionId: lease?.chat ?? 's', lease: take });
  }

  async push(event: SessionFrame): Promise<Output[]> {
    const from = this.outputs.length;
    this.presenter.frame(event);
    await sleep(5); // the interim update runs on a timer (the widget's cadence: at once)
    await this.presenter.settled();
    return this.outputs.slice(from);
  }

  async finish(outcome: TurnOutcome): Promise<Output[]> {
    const from = this.outputs.length;
    await this.presenter.end(outcome);
    return this.outputs.slice(from);
  }
}

describe('paragraphs', () => {
  it('cuts complete paragraphs at blank lines and keeps the rest for more text', () => {
    expect(takeParagraphs('One.\n\nTwo')).toEqual({ paragraphs: ['One.'], rest: 'Two' });
    expect(takeParagraphs('One.\n  \n\nTwo.\n\n')).toEqual({ paragraphs: ['One.', 'Two.'], rest: '' });
    expect(takeParagraphs('- a\n- b\n')).toEqual({ paragraphs: [], rest: '- a\n- b\n' });
  });

  it('never cuts inside a fenced code block', () => {
    const code = 'Look:\n\n```js\nconst a = 1;\n\nconst b = 2;\n```\n\nDone';
    expect(takeParagraphs(code)).toEqual({ paragraphs: ['Look:', '```js\nconst a = 1;\n\nconst b = 2;\n```'], rest: 'Done' });
    // An open fence keeps everything after it.
    expect(takeParagraphs('```\na\n\nb')).toEqual({ paragraphs: [], rest: '```\na\n\nb' });
  });

  it('makes one message per paragraph, or one for the whole text', () => {
    expect(textMessages('A.\n\nB.', true)).toEqual([{ text: 'A.' }, { text: 'B.' }]);
    expect(textMessages('A.\n\nB.', false)).toEqual([{ text: 'A.\n\nB.' }]);
    expect(textMessages('  \n', true)).toEqual([]);
  });
});

describe('links', () => {
  it('keeps http(s), mailto and tel links, and turns any other target into text', () => {
    expect(sanitizeMarkdown('[docs](https://example.com/a) and [mail](mailto:a@example.com)')).toBe(
      '[docs](https://example.com/a) and [mail](mailto:a@example.com)',
    );
    expect(sanitizeMarkdown('[click](javascript:alert(1)) [x](data:text/html,hi) [rel](/admin)')).toBe('click) x rel');
    expect(sanitizeMarkdown('[click](jav&#x61;script:alert(1))')).not.toContain('](');
    expect(sanitizeMarkdown('<javascript:alert(1)> <https://example.com>')).toBe('\\<javascript:alert(1)\\> <https://example.com>');
    expect(sanitizeMarkdown('[a][r]\n\n[r]: javascript:alert(1)')).toBe('[a][r]\n\n');
  });

  it('sends images as links (attachments as links), never to be loaded', () => {
    expect(sanitizeMarkdown('![chart](https://example.com/c.png)')).toBe('[chart](https://example.com/c.png)');
    expect(sanitizeMarkdown('![x](javascript:alert(1))')).toBe('x)');
  });
});

describe('turns', () => {
  const options = { stream: 'paragraphs', confirmations: 'buttons' } as const;

  it('shows typing while working, says each paragraph once complete, and the rest at the end', async () => {
    const renderer = new TurnRenderer(options);
    expect(await renderer.push(frame({ type: 'agent_state', payload: { state: 'thinking' } }))).toEqual([{ kind: 'typing', on: true }]);
    expect(await renderer.push(frame({ type: 'token', payload: { text: 'First.\n\nSec', final: false } }))).toEqual([
      { kind: 'say', message: { text: 'First.' } },
    ]);
    expect(await renderer.push(frame({ type: 'token', payload: { text: 'ond.', final: false } }))).toEqual([]);
    const done = { message_id: 'm', total_tokens: 0, input_tokens: 0, output_tokens: 0, duration_ms: 0, tool_calls: 0, text: 'First.\n\nSecond.' };
    expect(await renderer.finish({ kind: 'done', done })).toEqual([
      { kind: 'say', message: { text: 'Second.' } },
      { kind: 'typing', on: false },
    ]);
  });

  it('answers from done.text when nothing streamed, and the whole answer at once with stream: final', async () => {
    const done = { message_id: 'm', total_tokens: 0, input_tokens: 0, output_tokens: 0, duration_ms: 0, tool_calls: 0, text: 'A.\n\nB.' };
    expect(said(await new TurnRenderer(options).finish({ kind: 'done', done }))).toEqual([{ text: 'A.' }, { text: 'B.' }]);
    const final = new TurnRenderer({ ...options, stream: 'final' });
    expect(said(await final.push(frame({ type: 'token', payload: { text: 'A.\n\nB.', final: true } })))).toEqual([]);
    expect(said(await final.finish({ kind: 'done', done }))).toEqual([{ text: 'A.\n\nB.' }]);
    expect(said(await new TurnRenderer(options).finish({ kind: 'done', done: { ...done, text: '' } }))).toEqual([{ text: '…' }]);
  });

  it('asks with six quick replies (what streamed first goes first) and stops typing; or refuses', async () => {
    const renderer = new TurnRenderer(options);
    await renderer.push(frame({ type: 'token', payload: { text: 'Let me save it.', final: false } }));
    const request = frame({ type: 'tool_confirm_request', payload: { confirmation_id: 'c1', tool: 'save_note', parameters: {}, message: 'Run save_note?' } });
    const outputs = await renderer.push(request);
    expect(outputs.map((output) => output.kind)).toEqual(['say', 'typing', 'say']);
    const question = said(outputs)[1] as { text: string; quick_replies: { payload: string }[] };
    expect(question.quick_replies.map((reply) => parseConfirmPayload(reply.payload)?.action)).toEqual([
      'allow',
      'deny',
      'allow_all',
      'disable',
      'forbid_all',
      'cancel',
    ]);
    expect(await new TurnRenderer({ ...options, confirmations: 'refuse' }).push(request)).toEqual([
      { kind: 'refuse', confirmationId: 'c1', tool: 'save_note' },
    ]);
  });

  it('ends with an apology, a cancel note, or nothing for a merged or dropped message', async () => {
    expect(said(await new TurnRenderer(options).finish({ kind: 'error', code: 'PROVIDER_ERROR', message: 'secret detail' }))).toEqual([
      { text: 'Sorry, something went wrong while answering. Please try again.' },
    ]);
    expect(said(await new TurnRenderer(options).finish({ kind: 'cancelled' }))).toEqual([{ text: 'Cancelled.' }]);
    expect(await new TurnRenderer(options).finish({ kind: 'merged', into: 't' })).toEqual([]);
  });

  it("keeps a later turn's output until the earlier turn of the conversation ended (the chat's rendering lease)", async () => {
    const delivered: string[] = [];
    const leases = new InProcessRenderLeases();
    const turn = (conversation: string) =>
      new TurnRenderer(options, { leases, chat: conversation }, (output) => output.kind === 'say' && delivered.push(`${conversation}:${output.message.text}`));
    const token = (text: string) => frame({ type: 'token', payload: { text: `${text}\n\n`, final: false } });
    const done = (text: string): TurnOutcome => ({
      kind: 'done',
      done: { message_id: 'm', total_tokens: 0, input_tokens: 0, output_tokens: 0, duration_ms: 0, tool_calls: 0, text },
    });
    const first = turn('a');
    const second = turn('a');
    const elsewhere = turn('b');
    await first.push(token('1a'));
    await Promise.race([second.push(token('2a')), sleep(50)]);
    await elsewhere.push(token('b1'));
    await Promise.race([second.push(token('2b')), sleep(50)]);
    expect(delivered).toEqual(['a:1a', 'b:b1']);
    await first.push(token('1b'));
    await first.finish(done('1a\n\n1b'));
    await second.finish(done('2a\n\n2b'));
    await elsewhere.finish(done('b1'));
    expect(delivered).toEqual(['a:1a', 'b:b1', 'a:1b', 'a:2a', 'a:2b']);
    expect(leases.active).toBe(0);
  });
});

describe('visitors', () => {
  it('issues signed ids and takes back only its own', () => {
    const ids = new SessionIds('a-secret-of-some-length');
    const { id, conversation } = ids.issue();
    expect(id).toMatch(/^[0-9a-f]{64}$/);
    expect(ids.verify(id)).toBe(conversation);
    expect(new SessionIds('a-secret-of-some-length').verify(id)).toBe(conversation);
    expect(new SessionIds('another-secret-here').verify(id)).toBeNull();
    const flipped = id.slice(0, 63) + (id.endsWith('0') ? '1' : '0');
    for (const other of [flipped, id.toUpperCase(), `${id}0`, '', null, 42, { id }]) expect(ids.verify(other)).toBeNull();
    expect(ids.issue().conversation).not.toBe(conversation);
  });

  it('takes contact tags from customData: tags, and plain values as key:value', () => {
    expect(
      contactTags({ tags: ['vip', ' vip ', '', 'x'.repeat(65), 'bad\u0001'], language: 'en', beta: true, nested: { a: 1 }, 'no spaces': 'x', empty: '' }),
    ).toEqual(['vip', 'language:en', 'beta:true']);
    expect(contactTags(null)).toEqual([]);
    expect(contactTags(['vip'])).toEqual([]);
    expect(contactTags({ tags: Array.from({ length: 20 }, (_, index) => `t${index}`) })).toHaveLength(10);
  });

  it('reads only its own confirmation payloads; everything else is text for the hub', () => {
    expect(parseConfirmPayload(confirmPayload('c-1', 'allow_all'))).toEqual({ confirmationId: 'c-1', action: 'allow_all' });
    for (const text of ['/tool_confirm', '/tool_confirm{}', '/tool_confirm{"confirmation_id":"c","action":"rm"}', '/tool_confirm{nope', '/info', 'allow'])
      expect(parseConfirmPayload(text)).toBeNull();
    const inbound = toInbound('abc123', 'hello', ['vip'], {});
    expect(inbound).toMatchObject({
      channel: 'webchat',
      sessionKey: 'webchat::abc123',
      sender: { userId: 'channel:webchat', contactId: 'abc123', tags: ['vip'] },
      mode: 'normal',
    });
  });

  it('counts per-session messages in a sliding minute and distinct sessions per address', () => {
    let now = 0;
    const minute = new SlidingWindow(2, 60_000, () => now);
    expect([minute.take('s'), minute.take('s'), minute.take('s'), minute.take('t')]).toEqual([true, true, false, true]);
    now = 60_001;
    expect(minute.take('s')).toBe(true);
    const hour = new DistinctWindow(2, 3_600_000, () => now);
    expect([hour.admit('ip', 'a'), hour.admit('ip', 'b'), hour.admit('ip', 'a'), hour.admit('ip', 'c'), hour.admit('other', 'c')]).toEqual([
      true,
      true,
      true,
      false,
      true,
    ]);
    now += 3_600_001;
    expect(hour.admit('ip', 'c')).toBe(true);
    hour.sweep();
    minute.sweep();
  });

  it('keeps answers for an away visitor within its bounds', () => {
    let now = 0;
    const held = new HeldMessages<string>({ keepMs: 1000, perConversation: 2, conversations: 2 }, () => now);
    held.hold('a', '1');
    held.hold('a', '2');
    held.hold('a', '3');
    held.hold('b', 'x');
    held.hold('c', 'y'); // the third conversation pushes out the one held longest
    expect(held.take('a')).toEqual([]);
    expect(held.take('b')).toEqual(['x']);
    expect(held.take('b')).toEqual([]);
    now = 1001;
    expect(held.take('c')).toEqual([]);
    held.hold('d', 'z');
    expect(held.take('d')).toEqual(['z']);
    held.hold('e', 'w');
    now = 5000;
    held.sweep();
    expect(held.size).toBe(0);
  });
});

describe('settings', () => {
  it('refuses a socket path under the API, a bad origin, and a short secret, naming the key', () => {
    expect(webchatSettingsSchema.parse({})).toMatchObject({
      enabled: false,
      path: '/socket.io',
      confirmations: 'refuse',
      stream: 'paragraphs',
      mid_turn: 'queue',
    });
    expect(webchatSettingsSchema.parse({ path: '/chat/socket/' }).path).toBe('/chat/socket');
    for (const bad of [
      { path: '/api/v1/x' },
      { path: '/ws' },
      { path: '/' },
      { path: 'socket.io' },
      { allowed_origins: ['https://example.com/page'] },
      { session_secret: 'short' },
      { unknown: 1 },
    ]) {
      expect(webchatSettingsSchema.safeParse(bad).success).toBe(false);
    }
  });
});
