import path from 'node:path';
import { spawn, type IPty } from '@lydell/node-pty';
import { Terminal } from '@xterm/headless';
import { REPO_ROOT } from './process';

export interface PtyOptions {
  env: Record<string, string>;
  columns?: number;
  rows?: number;
}

/**
 * The built CLI (`node dist/src/compose/cli.js …`) on a pseudo-terminal, its output rendered by a
 * headless xterm, so a test reads what a person would see on the screen (and the scrollback), not
 * the escape sequences that drew it.
 */
export class PtySession {
  readonly exited: Promise<number>;
  /** Everything the program wrote, escape sequences included. */
  raw = '';
  private readonly pty: IPty;
  private readonly terminal: Terminal;
  private readonly waiters = new Set<() => void>();
  private pendingWrites = 0;

  constructor(args: readonly string[], options: PtyOptions) {
    const columns = options.columns ?? 100;
    const rows = options.rows ?? 30;
    this.terminal = new Terminal({ cols: columns, rows, scrollback: 5_000, allowProposedApi: true });
    this.pty = spawn(process.execPath, [path.join(REPO_ROOT, 'dist/src/compose/cli.js'), ...args], {
      name: 'xterm-256color',
      cols: columns,
      rows,
      cwd: REPO_ROOT,
      // Only what is given, plus what a terminal has: no HOME credentials, no CI variable.
      env: { PATH: process.env.PATH ?? '', TERM: 'xterm-256color', ...options.env },
    });
    this.pty.onData((data) => {
      this.raw += data;
      this.pendingWrites += 1;
      this.terminal.write(data, () => {
        this.pendingWrites -= 1;
        for (const wake of [...this.waiters]) wake();
      });
    });
    this.exited = new Promise((resolve) =>
      this.pty.onExit(({ exitCode }) => {
        // Let the last output reach the terminal before anyone reads the screen.
        setTimeout(() => {
          resolve(exitCode);
          for (const wake of [...this.waiters]) wake();
        }, 50);
      }),
    );
  }

  /** Types text or control keys (`\r` Enter, `\u0003` Ctrl-C, `\u0004` Ctrl-D, `\u001b[A` up). */
  type(keys: string): void {
    this.pty.write(keys);
  }

  resize(columns: number, rows: number): void {
    this.pty.resize(columns, rows);
    this.terminal.resize(columns, rows);
  }

  /** The visible rows, right-trimmed (written spaces too: a prompt's `› ` reads as `›`). */
  screen(): string[] {
    const buffer = this.terminal.buffer.active;
    const rows: string[] = [];
    for (let row = 0; row < this.terminal.rows; row += 1) rows.push((buffer.getLine(buffer.viewportY + row)?.translateToString(true) ?? '').trimEnd());
    return rows;
  }

  /** The last row: where the status line lives. */
  bottomRow(): string {
    return this.screen().at(-1) ?? '';
  }

  /**
   * Scrollback and screen as logical lines: rows the terminal wrapped are joined again, so a test
   * can compare an answer with what was streamed whatever the width.
   */
  transcript(): string[] {
    const buffer = this.terminal.buffer.active;
    const lines: string[] = [];
    for (let row = 0; row < buffer.length; row += 1) {
      const line = buffer.getLine(row);
      if (!line) continue;
      const text = line.translateToString(true).trimEnd();
      if (line.isWrapped && lines.length > 0) lines[lines.length - 1] = (lines.at(-1) ?? '') + text;
      else lines.push(text);
    }
    while (lines.length > 0 && lines.at(-1) === '') lines.pop();
    return lines;
  }

  text(): string {
    return this.transcript().join('\n');
  }

  /** Waits until `check` passes on the rendered output; fails with the screen when it does not. */
  async waitFor(check: string | RegExp | ((session: PtySession) => boolean), timeoutMs = 15_000): Promise<void> {
    const passes = () => {
      if (this.pendingWrites > 0) return false;
      if (typeof check === 'function') return check(this);
      const text = this.text();
      return typeof check === 'string' ? text.includes(check) : check.test(text);
    };
    if (passes()) return;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.delete(wake);
        reject(new Error(`timed out waiting for ${String(check)}; the terminal shows:\n${this.text()}\n[last row] ${this.bottomRow()}`));
      }, timeoutMs);
      const wake = () => {
        if (!passes()) return;
        clearTimeout(timer);
        this.waiters.delete(wake);
        resolve();
      };
      this.waiters.add(wake);
    });
  }

  kill(): void {
    try {
      this.pty.kill('SIGKILL');
    } catch {
      // already gone
    }
  }

  dispose(): void {
    this.kill();
    this.terminal.dispose();
  }
}
