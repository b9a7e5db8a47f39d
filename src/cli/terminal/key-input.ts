import { emitKeypressEvents } from 'node:readline';

/** A key press as node's readline reports it. */
export interface KeyPress {
  sequence?: string;
  name?: string;
  ctrl?: boolean;
  meta?: boolean;
  shift?: boolean;
}

export function isCtrl(key: KeyPress, letter: string): boolean {
  return key.ctrl === true && key.name === letter;
}

/**
 * Single key presses from a terminal, without echo, while no line is being edited (a turn is
 * running). Raw mode turns Ctrl-C into a key instead of SIGINT, so the client decides what it means.
 */
export class KeyInput {
  private handler: ((key: KeyPress) => void) | null = null;
  private readonly onKeypress = (_text: string | undefined, key: KeyPress | undefined) => {
    if (key) this.handler?.(key);
  };

  constructor(private readonly input: NodeJS.ReadStream) {
    emitKeypressEvents(input);
  }

  start(handler: (key: KeyPress) => void): void {
    this.stop();
    this.handler = handler;
    this.input.setRawMode(true);
    this.input.on('keypress', this.onKeypress);
    this.input.resume();
  }

  stop(): void {
    if (!this.handler) return;
    this.handler = null;
    this.input.off('keypress', this.onKeypress);
    this.input.setRawMode(false);
    this.input.pause();
  }
}
