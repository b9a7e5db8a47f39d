import WebSocket from 'ws';

export interface Closed {
  code: number;
  reason: string;
}

/** A real `ws` client that records every frame, for asserting on order, seq and close codes. */
export class TestSocket {
  readonly frames: any[] = [];
  readonly closed: Promise<Closed>;
  private waiters: { predicate: (frame: any) => boolean; resolve: (frame: any) => void }[] = [];

  constructor(readonly ws: WebSocket) {
    this.closed = new Promise((resolve) => ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() })));
    ws.on('message', (data) => {
      const text = data.toString();
      let frame: any;
      try {
        frame = JSON.parse(text);
      } catch {
        frame = text;
      }
      this.frames.push(frame);
      for (const waiter of this.waiters.filter((w) => w.predicate(frame))) {
        this.waiters.splice(this.waiters.indexOf(waiter), 1);
        waiter.resolve(frame);
      }
    });
    ws.on('error', () => undefined);
  }

  /** The first frame (already received or coming) that matches. */
  next(predicate: (frame: any) => boolean, timeoutMs = 10_000): Promise<any> {
    const seen = this.frames.find(predicate);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`no matching frame in ${timeoutMs} ms; got ${JSON.stringify(this.frames.map((f) => f.type ?? f))}`)),
        timeoutMs,
      );
      this.waiters.push({
        predicate,
        resolve: (frame) => {
          clearTimeout(timer);
          resolve(frame);
        },
      });
    });
  }

  /** Waits for the frame of `type` that comes after `afterSeq` (default: any). */
  nextOfType(type: string, afterSeq = -Infinity, timeoutMs?: number): Promise<any> {
    return this.next((frame) => frame.type === type && (frame.seq ?? Infinity) > afterSeq, timeoutMs);
  }

  send(value: unknown): void {
    this.ws.send(typeof value === 'string' ? value : JSON.stringify(value));
  }

  close(): void {
    this.ws.close();
  }

  get protocol(): string {
    return this.ws.protocol;
  }
}

export interface OpenOptions {
  headers?: Record<string, string>;
  protocols?: string[];
}

/** Opens a socket; resolves once open, or once closed if the server closes during the handshake. */
export function openSocket(url: string, options: OpenOptions = {}): Promise<TestSocket> {
  const ws = new WebSocket(url, options.protocols ?? [], { headers: options.headers });
  const socket = new TestSocket(ws);
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve(socket));
    ws.once('unexpected-response', (_request, response) => reject(Object.assign(new Error(`HTTP ${response.statusCode}`), { status: response.statusCode })));
    void socket.closed.then(() => resolve(socket));
  });
}
