import { StatusLine } from './status-line';

/** Where a turn is drawn: text that scrolls, and (on a terminal) a status line under it. */
export interface Screen {
  readonly atLineStart: boolean;
  readonly columns: number;
  start(): void;
  write(text: string): void;
  status(text: string, style?: (text: string) => string): void;
  stop(): void;
}

/** A terminal: the status line lives on the last row (see StatusLine). */
export class TerminalScreen implements Screen {
  private readonly line: StatusLine;

  constructor(private readonly output: NodeJS.WriteStream) {
    this.line = new StatusLine(output);
  }

  get atLineStart(): boolean {
    return this.line.atLineStart;
  }

  get columns(): number {
    return this.output.columns ?? 80;
  }

  start(): void {
    this.line.start();
  }

  write(text: string): void {
    this.line.write(text);
  }

  status(text: string, style?: (text: string) => string): void {
    this.line.set(text, style);
  }

  stop(): void {
    this.line.stop();
  }
}

/** Not a terminal (output piped): text only, no status line. */
export class PlainScreen implements Screen {
  private lastCharacter = '\n';
  readonly columns = 100;

  constructor(private readonly output: NodeJS.WritableStream) {}

  get atLineStart(): boolean {
    return this.lastCharacter === '\n';
  }

  start(): void {}

  write(text: string): void {
    if (text === '') return;
    this.output.write(text);
    this.lastCharacter = text.at(-1)!;
  }

  status(): void {}

  stop(): void {}
}
