import { EventEmitter } from 'node:events';
import pc from 'picocolors';
import { actionForKey, confirmQuestion, formatConfirmRequest } from '../../src/cli/chat/confirm-prompt';
import { StatusLine } from '../../src/cli/terminal/status-line';
import { formatTable } from '../../src/cli/terminal/table';
import { sanitize, stripAnsi, truncate, visibleWidth } from '../../src/cli/terminal/text';
import { TurnTranscript } from '../../src/cli/chat/turn-transcript';
import { formatDoneSummary, formatTurnStatus } from '../../src/cli/chat/turn-status';
import type { TurnSnapshot } from '../../src/cli/chat/turn-follower';

/** The terminal pieces that need no hub: pure functions, and the status line against a recorded stream. */
const plain = pc.createColors(false);

/** A terminal output stream that records what is written to it. */
class RecordingOutput extends EventEmitter {
  written: string[] = [];
  constructor(
    public columns: number,
    public rows: number,
  ) {
    super();
  }
  write(text: string): boolean {
    this.written.push(text);
    return true;
  }
}

describe('the status line', () => {
  it('sets a scroll region above the last row, draws there, and gives the screen back', () => {
    const output = new RecordingOutput(40, 10);
    const line = new StatusLine(output as unknown as NodeJS.WriteStream);
    line.start();
    expect(output.written[0]).toBe('\n\u001b7\u001b[1;9r\u001b8\u001b[1A');
    line.set('⠋ writing · 1.0 s');
    expect(output.written.at(-1)).toBe('\u001b7\u001b[10;1H\u001b[2K⠋ writing · 1.0 s\u001b8');
    line.stop();
    expect(output.written.at(-1)).toBe('\u001b7\u001b[10;1H\u001b[2K\u001b[r\u001b8');
  });

  it('cuts the status to the width and never redraws while a row is filled to its last column', () => {
    const output = new RecordingOutput(20, 10);
    const line = new StatusLine(output as unknown as NodeJS.WriteStream);
    line.start();
    line.set('x'.repeat(50));
    expect(output.written.at(-1)).toContain(`${'x'.repeat(18)}…\u001b8`);
    line.write('a'.repeat(20)); // the cursor now waits to wrap: restoring it would lose that
    const before = output.written.length;
    line.set('new status');
    expect(output.written.length).toBe(before);
    line.write('b'); // wrapped: the redraw happens now
    expect(output.written.at(-1)).toBe('\u001b7\u001b[10;1H\u001b[2Knew status\u001b8');
    // Colours take no columns.
    line.write(`\n${pc.createColors(true).red('r'.repeat(20))}`);
    const coloured = output.written.length;
    line.set('after colour');
    expect(output.written.length).toBe(coloured);
    // Wide characters count twice; a newline starts over.
    line.write('\n界界界界界界界界界界');
    const count = output.written.length;
    line.set('wide');
    expect(output.written.length).toBe(count);
    line.stop();
  });

  it('after a resize: clears the new last row, sets the new region, and redraws only once a line starts', () => {
    const output = new RecordingOutput(40, 10);
    const line = new StatusLine(output as unknown as NodeJS.WriteStream);
    line.start();
    line.set('status');
    line.write('some text in the middle of a line');
    output.columns = 30;
    output.rows = 8;
    output.emit('resize');
    expect(output.written.slice(-2)).toEqual(['\u001b7\u001b[8;1H\u001b[2K\u001b[r\u001b8', '\u001b7\u001b[1;7r\u001b8']);
    // Where the cursor is now depends on whether the terminal rewrapped the line: unknown.
    const before = output.written.length;
    line.set('later status');
    line.write(' more');
    expect(output.written.length).toBe(before + 1);
    line.write(' end\n');
    expect(output.written.at(-1)).toBe('\u001b7\u001b[8;1H\u001b[2Klater status\u001b8');
    line.stop();
  });

  it('stays out of the way of a terminal with too few rows', () => {
    const output = new RecordingOutput(80, 3);
    const line = new StatusLine(output as unknown as NodeJS.WriteStream);
    line.start();
    line.set('status');
    line.write('text');
    line.stop();
    expect(output.written).toEqual(['text']);
  });
});

describe('text for the terminal', () => {
  it('strips control characters (escape sequences from a model) but keeps tabs and newlines', () => {
    expect(sanitize('a\u001b[2Jb\u0007c\td\ne\u009bf\r')).toBe('a[2Jbc\td\nef');
    expect(stripAnsi('\u001b[31mred\u001b[39m \u001b]0;title\u0007x')).toBe('red x');
  });

  it('measures and cuts by columns, wide characters and emoji counting two', () => {
    expect(visibleWidth('界a')).toBe(3);
    expect(truncate('abcdef', 4)).toBe('abc…');
    expect(truncate('界界界', 4)).toBe('界…');
    expect(truncate('abc', 3)).toBe('abc');
  });

  it('aligns tables and cuts only the last column to the width', () => {
    const lines = formatTable(
      ['ID', 'NAME'],
      [
        ['1', 'short'],
        ['22', 'a much longer name than fits'],
      ],
      16,
    );
    expect(lines).toEqual(['ID  NAME', '1   short', '22  a much long…']);
    expect(visibleWidth(lines[2]!)).toBe(16);
  });
});

describe('the confirmation prompt', () => {
  it("maps the spec's CLI keys, Enter to allow, and nothing else", () => {
    expect(['y', 'n', 'a', 'd', 'f', 'c'].map((key) => actionForKey({ sequence: key, name: key }))).toEqual([
      'allow',
      'deny',
      'allow_all',
      'disable',
      'forbid_all',
      'cancel',
    ]);
    expect(actionForKey({ sequence: 'Y', name: 'y', shift: true })).toBe('allow');
    expect(actionForKey({ sequence: '\r', name: 'return' })).toBe('allow');
    expect(actionForKey({ sequence: 'x', name: 'x' })).toBeNull();
    expect(actionForKey({ sequence: '\u0019', name: 'y', ctrl: true })).toBeNull();
    expect(actionForKey({ sequence: ' ', name: 'space' })).toBeNull();
  });

  it('shows the tool, the message and the parameters, short ones first, long ones cut with their length', () => {
    const lines = formatConfirmRequest(
      {
        confirmation_id: 'c1',
        tool: 'write_file',
        message: 'Allow "write_file" to run with path: "a.md", content: <2048 characters>?',
        parameters: { content: 'x'.repeat(2048), path: 'a.md' },
      },
      60,
      plain,
    );
    expect(lines).toEqual([
      '? write_file needs your confirmation',
      '  Allow "write_file" to run with path: "a.md", content: <2048 characters>?',
      '    path     "a.md"',
      `    content  "${'x'.repeat(26)}… (2,048 characters)`,
    ]);
    expect(confirmQuestion(plain, 80)).toBe('  Allow? [Y]es [n]o [a]llow all [d]isable [f]orbid all [c]ancel › ');
    expect(confirmQuestion(plain, 60)).toBe('  Allow? [Y/n/a/d/f/c] › ');
  });
});

describe('the turn transcript', () => {
  it('streams live; after a restart swallows what was shown and resumes where the user left off', () => {
    const transcript = new TurnTranscript();
    expect(transcript.accept('Hello ')).toBe('Hello ');
    expect(transcript.accept('wor')).toBe('wor');
    transcript.restart();
    expect(transcript.accept('Hel')).toBe('');
    expect(transcript.accept('lo wo')).toBe('');
    expect(transcript.accept('rld!')).toBe('ld!');
    expect(transcript.accept(' More.')).toBe(' More.');
    expect(transcript.finish('Hello world! More.')).toEqual({ text: '', restated: false });
  });

  it('holds text when frames may be lost and completes it from the full text', () => {
    const transcript = new TurnTranscript();
    transcript.accept('Part one, ');
    transcript.hold();
    expect(transcript.holding).toBe(true);
    expect(transcript.accept('three.')).toBe('');
    expect(transcript.finish('Part one, two, three.')).toEqual({ text: 'two, three.', restated: false });
  });

  it('restates the whole answer when a rerun said something else', () => {
    const transcript = new TurnTranscript();
    transcript.accept('The answer is 4');
    transcript.restart();
    expect(transcript.accept('The answer is 5')).toBe('');
    expect(transcript.finish('The answer is 5.')).toEqual({ text: 'The answer is 5.', restated: true });
  });
});

describe('status and summary lines', () => {
  const snapshot = (extra: Partial<TurnSnapshot> = {}): TurnSnapshot => ({
    state: 'writing',
    startedAt: 1_000,
    running: new Map(),
    finished: [],
    memory: null,
    catchingUp: false,
    ...extra,
  });

  it('shows state, time, running and finished tools, memory and what Ctrl-C does', () => {
    expect(formatTurnStatus(snapshot(), 4_200, { frame: 0, cancelling: false, reconnecting: null })).toBe('⠋ writing · 3.2 s · Ctrl-C cancels');
    const busy = snapshot({
      running: new Map([['c1', { name: 'write_file', startedAt: 3_000 }]]),
      memory: { mode: 'summary', tokensUsed: 12_345, summarized: true },
    });
    expect(formatTurnStatus(busy, 4_200, { frame: 1, cancelling: false, reconnecting: null })).toBe(
      '⠙ writing · 3.2 s · ▶ write_file 1.2 s · memory 12,345 tokens, summarised · Ctrl-C cancels',
    );
    const failed = snapshot({ finished: [{ id: 'c1', name: 'http_fetch', durationMs: 30, error: 'refused' }] });
    expect(formatTurnStatus(failed, 4_200, { frame: 2, cancelling: true, reconnecting: null })).toBe(
      '⠹ cancelling · 3.2 s · ✗ http_fetch: refused · Ctrl-C again quits',
    );
    expect(
      formatTurnStatus(snapshot(), 4_200, { frame: 0, cancelling: false, reconnecting: { attempt: 3, maxAttempts: 10, at: 6_000, why: 'ECONNREFUSED' } }),
    ).toBe('↻ connection lost (ECONNREFUSED): reconnecting in 2 s (attempt 3 of 10) · Ctrl-C cancels');
  });

  it('sums a turn up: time, tokens, tool calls with durations and errors, workflow when the hub names it', () => {
    const done = {
      message_id: 'm',
      text: '',
      total_tokens: 1_234,
      input_tokens: 1_000,
      output_tokens: 234,
      duration_ms: 2_500,
      tool_calls: 2,
      workflow: 'support',
    };
    const tools = snapshot({
      finished: [
        { id: 'a', name: 'write_file', durationMs: 12, error: null },
        { id: 'b', name: 'calculator', durationMs: 1, error: 'bad input' },
      ],
    });
    expect(formatDoneSummary(done, tools)).toBe(
      '✓ done in 2.5 s · 1,234 tokens (1,000 in, 234 out) · 2 tool calls: write_file 12 ms, calculator ✗ bad input · workflow support',
    );
  });
});
