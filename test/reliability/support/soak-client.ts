import WebSocket from 'ws';

/**
 * One web-UI-like socket for the soak: sends its messages as `user_message` frames, waits for each
 * turn's `done`, pings every 30 s as the web UI does, and records every close it did not ask for.
 */
export class SoakSocket {
  readonly unexpectedCloses: { code: number; reason: string }[] = [];
  turns = 0;
  /** Why each failed turn failed: the error frame's code and message, or what the socket saw. */
  readonly failures: string[] = [];
  /** Frames whose seq was not the one after the last (each seq once, in order). */
  outOfOrder = 0;
  private ws!: WebSocket;
  private closing = false;
  private lastSeq = 0;
  private onEnd: ((ok: boolean, why?: string) => void) | null = null;
  private pinger: NodeJS.Timeout | null = null;

  constructor(
    private readonly url: string,
    private readonly token: string,
  ) {}

  open(): Promise<void> {
    this.ws = new WebSocket(`${this.url}?last_seq=0`, { headers: { authorization: `Bearer ${this.token}` } });
    this.ws.on('message', (data) => {
      const frame = JSON.parse(data.toString()) as { type: string; seq: number; payload: Record<string, unknown> };
      if (frame.seq !== this.lastSeq + 1) this.outOfOrder += 1;
      this.lastSeq = Math.max(this.lastSeq, frame.seq);
      if (frame.type === 'done') this.end(true);
      else if (frame.type === 'error' && frame.payload.turn_id && frame.payload.code !== 'WORKER_UNAVAILABLE')
        this.end(false, `${String(frame.payload.code)}: ${String(frame.payload.message)}`);
    });
    this.ws.on('error', () => undefined);
    this.ws.on('close', (code, reason) => {
      if (!this.closing) this.unexpectedCloses.push({ code, reason: reason.toString() });
      this.end(false, `socket closed (${code})`);
    });
    this.pinger = setInterval(() => this.ws.readyState === WebSocket.OPEN && this.ws.send(JSON.stringify({ type: 'ping' })), 30_000);
    return new Promise((resolve, reject) => {
      this.ws.once('open', () => resolve());
      this.ws.once('unexpected-response', (_request, response) => reject(new Error(`socket refused: HTTP ${response.statusCode}`)));
    });
  }

  /** Sends a message and resolves when its turn ended (true: `done`). */
  turn(text: string, timeoutMs = 60_000): Promise<boolean> {
    if (this.ws.readyState !== WebSocket.OPEN) return Promise.resolve(false);
    return new Promise((resolve) => {
      const timer = setTimeout(() => this.end(false, `no done within ${timeoutMs} ms`), timeoutMs);
      this.onEnd = (ok, why) => {
        clearTimeout(timer);
        this.turns += 1;
        if (!ok) this.failures.push(why ?? 'unknown');
        resolve(ok);
      };
      this.ws.send(JSON.stringify({ type: 'user_message', payload: { text } }));
    });
  }

  /** Turns that ended in an `error` frame (or a close, or no `done`) instead of `done`. */
  get failedTurns(): number {
    return this.failures.length;
  }

  close(): void {
    this.closing = true;
    if (this.pinger) clearInterval(this.pinger);
    this.ws.close();
  }

  private end(ok: boolean, why?: string): void {
    const onEnd = this.onEnd;
    this.onEnd = null;
    onEnd?.(ok, why);
  }
}
