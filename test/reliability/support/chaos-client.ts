import { randomUUID } from 'node:crypto';
import WebSocket from 'ws';

/** `error` codes that end a turn (anything else with a turn id is a note: WORKER_UNAVAILABLE). */
const NOTE_CODES = new Set(['WORKER_UNAVAILABLE']);

export interface ReceivedFrame {
  type: string;
  seq: number;
  payload: any;
  /** When this client got it (Date.now()). */
  at: number;
}

/**
 * A web client that does what a well-behaved one must under failures: one session socket to any
 * API process that is up, reconnected with `last_seq` whenever it drops, every `tool_confirm_request`
 * answered `allow` (unless the test holds it), messages sent over REST with an Idempotency-Key and
 * retried until one answer is 202. It checks what it gets: each seq exactly once, in order, no gaps.
 */
export class ResilientSession {
  readonly frames: ReceivedFrame[] = [];
  /** Every seq that broke "each once, in order, gapless". */
  readonly violations: string[] = [];
  readonly closes: { code: number; reason: string; at: number }[] = [];
  reconnects = 0;
  /** Messages whose sending gave up (never answered 202 within the retry budget). */
  readonly unsent: string[] = [];
  lastSeq = 0;
  /** The API process (base URL) the socket is open to now; null while reconnecting. */
  connectedTo: string | null = null;
  private ws: WebSocket | null = null;
  private stopped = false;
  private waiters: { predicate: (frame: ReceivedFrame) => boolean; resolve: (frame: ReceivedFrame) => void; timer?: NodeJS.Timeout }[] = [];
  private readonly heldConfirms: { matches: (payload: any) => boolean; resolve: (frame: ReceivedFrame) => void }[] = [];

  constructor(
    readonly sessionId: string,
    private readonly token: string,
    /** The API processes that are up now (base URLs); asked again at each (re)connection. */
    private readonly apis: () => string[],
  ) {}

  /** Connects (first time: replay from the start) and resolves once the socket is open. */
  async connect(): Promise<void> {
    for (let attempt = 0; !this.stopped; attempt += 1) {
      const live = this.apis();
      const api = live[Math.floor(Math.random() * live.length)];
      if (api && (await this.open(api))) return;
      await sleep(Math.min(1000, 100 * (attempt + 1)));
    }
  }

  private open(api: string): Promise<boolean> {
    const url = `${api.replace('http', 'ws')}/ws/v1/sessions/${this.sessionId}?last_seq=${this.lastSeq}`;
    const ws = new WebSocket(url, { headers: { authorization: `Bearer ${this.token}` } });
    return new Promise((resolve) => {
      let opened = false;
      ws.on('open', () => {
        opened = true;
        this.ws = ws;
        this.connectedTo = api;
        resolve(true);
      });
      ws.on('message', (data) => this.onFrame(JSON.parse(data.toString()) as { type: string; seq: number; payload: any }));
      ws.on('error', () => undefined);
      ws.on('unexpected-response', () => resolve(false));
      ws.on('close', (code, reason) => {
        if (!opened) return resolve(false);
        if (this.ws === ws) {
          this.ws = null;
          this.connectedTo = null;
        }
        if (this.stopped) return;
        this.closes.push({ code, reason: reason.toString(), at: Date.now() });
        this.reconnects += 1;
        void sleep(50 + Math.random() * 200).then(() => this.connect());
      });
    });
  }

  private onFrame(raw: { type: string; seq: number; payload: any }): void {
    const frame: ReceivedFrame = { type: raw.type, seq: raw.seq, payload: raw.payload ?? {}, at: Date.now() };
    if (frame.seq !== this.lastSeq + 1) this.violations.push(`${this.sessionId}: seq ${frame.seq} (${frame.type}) after ${this.lastSeq}`);
    if (frame.seq > this.lastSeq) this.lastSeq = frame.seq;
    this.frames.push(frame);
    if (frame.type === 'tool_confirm_request') this.onConfirmRequest(frame);
    for (const waiter of this.waiters.filter((w) => w.predicate(frame))) {
      this.waiters.splice(this.waiters.indexOf(waiter), 1);
      waiter.resolve(frame);
    }
  }

  private onConfirmRequest(frame: ReceivedFrame): void {
    const held = this.heldConfirms.findIndex((hold) => hold.matches(frame.payload));
    if (held >= 0) {
      const [hold] = this.heldConfirms.splice(held, 1);
      return hold!.resolve(frame);
    }
    // Answered every time it is asked (a re-asked one after a reconnect may not have had the answer).
    this.ws?.send(JSON.stringify({ type: 'tool_confirm', payload: { confirmation_id: frame.payload.confirmation_id, action: 'allow' } }));
  }

  /** The next confirmation request matching is not answered; resolves with it. */
  holdConfirmation(matches: (payload: any) => boolean): Promise<ReceivedFrame> {
    return new Promise((resolve) => this.heldConfirms.push({ matches, resolve }));
  }

  /** The first frame (already received or coming) that matches. */
  next(predicate: (frame: ReceivedFrame) => boolean, timeoutMs = 30_000, what = 'a frame'): Promise<ReceivedFrame> {
    const seen = this.frames.find(predicate);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const waiter: { predicate: typeof predicate; resolve: (frame: ReceivedFrame) => void; timer?: NodeJS.Timeout } = {
        predicate,
        resolve: (frame: ReceivedFrame) => {
          clearTimeout(timer);
          resolve(frame);
        },
      };
      const timer = setTimeout(() => {
        this.waiters.splice(this.waiters.indexOf(waiter), 1);
        reject(
          new Error(
            `${this.sessionId}: no ${what} in ${timeoutMs} ms; last frames ${JSON.stringify(this.frames.slice(-8).map((f) => [f.seq, f.type, f.payload.state ?? f.payload.code ?? '']))}`,
          ),
        );
      }, timeoutMs);
      waiter.timer = timer;
      this.waiters.push(waiter);
    });
  }

  /** Resolves with the frame that ended turn `turnId`: its `done`, or an `error` that ends it. */
  turnEnd(turnId: string, timeoutMs = 60_000): Promise<ReceivedFrame> {
    return this.next(
      (frame) => frame.payload.turn_id === turnId && (frame.type === 'done' || (frame.type === 'error' && !NOTE_CODES.has(frame.payload.code))),
      timeoutMs,
      `end of turn ${turnId}`,
    );
  }

  /**
   * Sends a message over REST (any API process that is up) with one Idempotency-Key for every
   * attempt, until one answer is 202; returns the stored message's id (the turn's id).
   */
  async send(text: string, budgetMs = 60_000): Promise<string | null> {
    const key = randomUUID();
    const deadline = Date.now() + budgetMs;
    let last = '';
    while (Date.now() < deadline) {
      const live = this.apis();
      const api = live[Math.floor(Math.random() * live.length)];
      if (api) {
        try {
          const response = await fetch(`${api}/api/v1/sessions/${this.sessionId}/messages`, {
            method: 'POST',
            headers: { authorization: `Bearer ${this.token}`, 'content-type': 'application/json', 'idempotency-key': key },
            body: JSON.stringify({ text }),
            signal: AbortSignal.timeout(15_000),
          });
          const body = (await response.json().catch(() => null)) as { data?: { id?: string }; error?: { code?: string } } | null;
          if (response.status === 202 && body?.data?.id) return body.data.id;
          last = `${response.status} ${body?.error?.code ?? ''}`;
          if (response.status < 500 && response.status !== 409 && response.status !== 429) break; // a refusal a retry will not change
        } catch (error) {
          last = (error as Error).message;
        }
      }
      await sleep(200);
    }
    this.unsent.push(`${text}: ${last}`);
    return null;
  }

  close(): void {
    this.stopped = true;
    this.ws?.close();
    for (const waiter of this.waiters.splice(0)) clearTimeout(waiter.timer); // nothing more comes
  }

  /** Frames of one turn, in order. */
  turnFrames(turnId: string): ReceivedFrame[] {
    return this.frames.filter((frame) => frame.payload.turn_id === turnId);
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
