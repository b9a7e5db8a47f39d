import { graphemes, stripAnsi, truncate, visibleWidth } from './text';

const ESC = '\u001b';
const SAVE = `${ESC}7`;
const RESTORE = `${ESC}8`;
const CLEAR_LINE = `${ESC}[2K`;
const RESET_REGION = `${ESC}[r`;
const setRegion = (bottom: number) => `${ESC}[1;${bottom}r`;
const moveTo = (row: number) => `${ESC}[${row};1H`;

/** The smallest terminal that gets a status line (fewer rows: the text alone). */
const MIN_ROWS = 4;

/**
 * A status line on the terminal's last row while text streams above it. The rows above become a
 * scroll region (DECSTBM): streamed text wraps and scrolls inside it and never meets the status
 * line, which is redrawn with save/restore cursor (apt's progress bar works the same way).
 *
 * One trap: a line filled to its last column leaves the cursor "pending wrap", and restoring the
 * cursor does not keep that in every terminal (tmux clamps it), so the next character would
 * overwrite the last one. The column of the text cursor is tracked, and a redraw waits until
 * the next text has moved the cursor off that spot. After a resize the column is unknown (some
 * terminals rewrap the line, some do not) until the text starts a new line.
 */
export class StatusLine {
  private active = false;
  /** Too few rows after a resize: no status line until the terminal grows again. */
  private suspended = false;
  private rows = 0;
  private columns = 0;
  /** Column of the text cursor, 0 at the start of a line; `columns` means pending wrap; null: unknown. */
  private column: number | null = 0;
  private status = '';
  private drawnStatus: string | null = null;
  private readonly onResize = () => this.resize();
  private readonly onExit = () => this.stop();

  constructor(private readonly output: NodeJS.WriteStream) {}

  /** Whether the text cursor is at the start of a line. */
  get atLineStart(): boolean {
    return this.column === 0;
  }

  /** Reserves the last row; the cursor is expected at the start of a line. */
  start(): void {
    this.column = 0;
    this.rows = this.output.rows ?? 0;
    this.columns = this.output.columns ?? 80;
    if (this.active || this.rows < MIN_ROWS) return;
    this.active = true;
    // A newline first: if the cursor is on the last row, this scrolls the screen to free it.
    this.suspended = false;
    this.output.write(`\n${SAVE}${setRegion(this.rows - 1)}${RESTORE}${ESC}[1A`);
    this.output.on('resize', this.onResize);
    process.on('exit', this.onExit);
    this.draw();
  }

  /** Writes text into the region above the status line (colours allowed; no cursor movement). */
  write(text: string): void {
    if (text === '') return;
    this.output.write(text);
    this.track(text);
    if (this.active && this.drawnStatus !== this.status) this.draw();
  }

  /** Sets the status text (plain; it is cut to the width, then `style` may colour it). */
  set(status: string, style: (text: string) => string = (text) => text): void {
    const next = style(truncate(status, Math.max(0, this.columns - 1)));
    if (next === this.status) return;
    this.status = next;
    this.draw();
  }

  /** Clears the status row and gives the whole screen back; the cursor stays after the text. */
  stop(): void {
    if (!this.active) return;
    this.active = false;
    this.output.off('resize', this.onResize);
    process.off('exit', this.onExit);
    this.output.write(`${SAVE}${moveTo(this.rows)}${CLEAR_LINE}${RESET_REGION}${RESTORE}`);
    this.drawnStatus = null;
  }

  private draw(): void {
    // Pending wrap, or not known not to be: see the class comment.
    if (!this.active || this.suspended || this.column === null || this.column >= this.columns) return;
    this.output.write(`${SAVE}${moveTo(this.rows)}${CLEAR_LINE}${this.status}${RESTORE}`);
    this.drawnStatus = this.status;
  }

  private track(text: string): void {
    for (const character of graphemes(stripAnsi(text))) {
      if (character === '\n' || character === '\r\n') {
        this.column = 0;
        continue;
      }
      if (this.column === null) continue;
      if (character === '\t') {
        this.column = Math.min(this.columns, (Math.floor(this.column / 8) + 1) * 8);
        continue;
      }
      const width = visibleWidth(character);
      if (width === 0) continue;
      this.column = this.column + width > this.columns ? width : this.column + width;
    }
  }

  private resize(): void {
    const rows = this.output.rows ?? this.rows;
    const columns = this.output.columns ?? this.columns;
    // Terminals keep the bottom row at the bottom when resizing (tmux, VTE): that is where the old
    // status is. Clear it and set the region for the new size.
    this.output.write(`${SAVE}${moveTo(rows)}${CLEAR_LINE}${RESET_REGION}${RESTORE}`);
    this.rows = rows;
    this.columns = columns;
    if (this.column !== 0) this.column = null;
    this.drawnStatus = null;
    this.suspended = rows < MIN_ROWS;
    if (this.suspended) return;
    this.output.write(`${SAVE}${setRegion(rows - 1)}${RESTORE}`);
    this.draw();
  }
}
