import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request a fake vendor server received. */
export interface RecordedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  /** The JSON body, parsed. */
  body: Record<string, unknown>;
  /** The client closed the connection before the scripted stream was finished. */
  hungUp: boolean;
}

/**
 * What the fake answers to one request: an HTTP error, or a server-sent-event stream of raw
 * `data:` payloads (objects are JSON-encoded, strings go out as they are, so a test can send
 * malformed data), optionally paced, optionally left hanging instead of ending.
 */
export type ScriptedReply =
  { kind: 'error'; status: number; body: unknown } | { kind: 'stream'; events: SseEvent[]; delayMs?: number; hang?: boolean; holdBefore?: Hold };

/** Stops a stream before event `index` until `until` settles (the test decides when the model goes on). */
export interface Hold {
  index: number;
  until: Promise<unknown>;
  /** Called when the stream reaches the hold. */
  reached?: () => void;
}

export interface SseEvent {
  /** The `event:` line (Anthropic names its events; OpenAI does not). */
  event?: string;
  data: unknown;
}

/**
 * A real HTTP server on an ephemeral loopback port that answers each request with the next scripted
 * reply and records what it got. The vendor fakes build their wire formats on it.
 */
export class ScriptedHttpServer {
  readonly requests: RecordedRequest[] = [];
  private readonly replies: ScriptedReply[] = [];
  /** Answers every request the queue has no reply for (bench/lib/model-server-entry.ts). */
  private standing: { reply: ScriptedReply; rendered: string[] } | null = null;
  /** Off: requests are counted, not kept (a benchmark sends thousands). */
  private record = true;
  /** The server's own time from a request's arrival to its stream's first event (the bench's model time). */
  private onFirstEvent: ((msSinceRequest: number) => void) | null = null;
  /** Requests received (also when not recorded). */
  received = 0;
  /** TCP connections accepted (a client that keeps its connection alive opens one). */
  connections = 0;
  private readonly server = http.createServer((request, response) => void this.handle(request, response));
  private readonly sockets = new Set<import('node:net').Socket>();
  /** Resolves when a stream has sent its first event (to abort mid-stream). */
  private firstEventSent: Array<() => void> = [];

  constructor(private readonly expectedPath: string) {
    this.server.on('connection', (socket) => {
      this.connections += 1;
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
  }

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  enqueue(...replies: ScriptedReply[]): void {
    this.replies.push(...replies);
  }

  /**
   * Every request the queue has no reply for gets `reply`, its events rendered once; `record: false`
   * keeps no request (a benchmark's model server answers thousands of turns).
   */
  answerEvery(reply: ScriptedReply, options: { record?: boolean; onFirstEvent?: (msSinceRequest: number) => void } = {}): void {
    this.standing = { reply, rendered: reply.kind === 'stream' ? reply.events.map(renderEvent) : [] };
    this.record = options.record ?? true;
    this.onFirstEvent = options.onFirstEvent ?? null;
  }

  /** How many scripted replies are still waiting for a request. */
  get pending(): number {
    return this.replies.length;
  }

  /** Drops the replies no request took (so a failed test does not shift the next one's). */
  clearReplies(): void {
    this.replies.length = 0;
  }

  /** Resolves once the next stream has written its first event. */
  streaming(): Promise<void> {
    return new Promise((resolve) => this.firstEventSent.push(resolve));
  }

  /** Whether the client hung up on the stream of request `index` (waits up to `timeoutMs` for it). */
  async hungUp(index: number, timeoutMs = 2000): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (!this.requests[index]?.hungUp && Date.now() < deadline) await sleep(10);
    return this.requests[index]?.hungUp ?? false;
  }

  private async handle(request: http.IncomingMessage, response: http.ServerResponse): Promise<void> {
    const arrived = performance.now();
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const url = new URL(request.url ?? '/', 'http://fake');
    this.received += 1;
    const recorded: RecordedRequest = {
      method: request.method ?? '',
      path: url.pathname,
      headers: request.headers,
      body: text ? (JSON.parse(text) as Record<string, unknown>) : {},
      hungUp: false,
    };
    if (this.record) this.requests.push(recorded);
    const queued = this.replies.shift();
    const reply = queued ?? this.standing?.reply;
    const rendered = queued ? null : (this.standing?.rendered ?? null);
    if (url.pathname !== this.expectedPath || !reply) {
      response.writeHead(url.pathname !== this.expectedPath ? 404 : 500, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ error: { message: reply ? `unexpected path ${url.pathname}` : 'no scripted reply left' } }));
      return;
    }
    if (reply.kind === 'error') {
      response.writeHead(reply.status, { 'content-type': 'application/json' });
      response.end(JSON.stringify(reply.body));
      return;
    }
    response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    response.on('close', () => {
      if (!response.writableFinished) recorded.hungUp = true;
    });
    for (const [index, event] of reply.events.entries()) {
      if (response.destroyed) return;
      if (index > 0 && reply.delayMs) await pacing(reply.delayMs, response);
      if (reply.holdBefore?.index === index) {
        reply.holdBefore.reached?.();
        await reply.holdBefore.until;
        if (response.destroyed) return;
      }
      // One write per event, as a vendor's server flushes each token.
      response.write(rendered?.[index] ?? renderEvent(event));
      if (index === 0) {
        this.onFirstEvent?.(performance.now() - arrived);
        for (const resolve of this.firstEventSent.splice(0)) resolve();
      }
    }
    if (!reply.hang) response.end();
  }
}

/** One server-sent event on the wire. */
function renderEvent(event: SseEvent): string {
  const data = typeof event.data === 'string' ? event.data : JSON.stringify(event.data);
  return `${event.event ? `event: ${event.event}\n` : ''}data: ${data}\n\n`;
}

/**
 * The pause before a stream's next event, cut short when the client hangs up: a timer left running
 * after a test aborted its stream kept the Jest worker alive past its file ("A worker process has
 * failed to exit gracefully").
 */
function pacing(milliseconds: number, response: http.ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      response.off('close', done);
      resolve();
    };
    const timer = setTimeout(done, milliseconds);
    response.once('close', done);
  });
}

export function sleep(milliseconds: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, milliseconds));
}
