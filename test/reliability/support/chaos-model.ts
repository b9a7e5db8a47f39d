import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { openAiChunk } from '../../fakes/openai-server';
import type { SseEvent } from '../../fakes/scripted-http-server';
import { socketOwner } from './chaos-procs';

/** The marker a chaos turn's user message carries, so the fake model knows whose turn it serves. */
export const turnMarker = (key: string) => `[chaos ${key}]`;
const MARKER = /\[chaos ([^\]\s]+)\]/;

/** The words of a turn's answer, streamed one token each. */
export const ANSWER_WORDS = ['Answer', ' for', ' KEY:', ' alpha', ' beta', ' gamma', ' delta', ' epsilon', ' zeta', '.'];
export const answerText = (key: string) => ANSWER_WORDS.join('').replace('KEY', key);

interface Served {
  key: string;
  kind: 'answer' | 'tool_call';
  /** The worker process that asked (null: could not tell). */
  pid: number | null;
  at: number;
}

/**
 * An OpenAI-compatible model for many concurrent turns, answering each request from what it holds
 * (not from a queue): a turn whose plan has a side effect first asks for `run_command` (curl to the
 * effect server, a fresh call id every time, as a real model names its calls), and answers once it
 * sees the tool's result; any other turn answers at once. Each answer streams ANSWER_WORDS. A test
 * can hold the next answer of a turn mid-stream (after three tokens, until the caller hangs up).
 */
export class ChaosModel {
  readonly served: Served[] = [];
  private readonly tools = new Map<string, string>();
  private readonly holds = new Map<string, (pid: number | null) => void>();
  private readonly sockets = new Set<Socket>();
  private readonly server = http.createServer((request, response) => void this.handle(request, response));
  private port = 0;

  constructor(
    /** The worker processes, to say which one asked. */
    private readonly workers: () => number[],
    private readonly tokenDelayMs = 15,
  ) {
    this.server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
  }

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
    return `http://127.0.0.1:${this.port}/v1`;
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** The turn `key` calls `run_command` with this shell command before it answers. */
  sideEffect(key: string, command: string): void {
    this.tools.set(key, command);
  }

  /** Resolves with the asking worker's pid once the next answer of `key` stops mid-stream. */
  holdAnswer(key: string): Promise<number | null> {
    return new Promise((resolve) => this.holds.set(key, resolve));
  }

  /** The worker that last asked the model on behalf of `key`. */
  lastWorker(key: string): number | null {
    for (let index = this.served.length - 1; index >= 0; index -= 1) if (this.served[index]!.key === key) return this.served[index]!.pid;
    return null;
  }

  private async handle(request: http.IncomingMessage, response: http.ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as { messages?: { role: string; content?: string | null }[] };
    const messages = body.messages ?? [];
    const lastUser = messages.map((message) => message.role).lastIndexOf('user');
    const key = MARKER.exec(messages[lastUser]?.content ?? '')?.[1] ?? 'unknown';
    const toolAnswered = messages.slice(lastUser + 1).some((message) => message.role === 'tool');
    const command = this.tools.get(key);
    const pid = socketOwner(request.socket.remotePort ?? 0, this.port, this.workers());
    const kind = command && !toolAnswered ? 'tool_call' : 'answer';
    this.served.push({ key, kind, pid, at: Date.now() });
    response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const write = (event: SseEvent) => response.write(`data: ${typeof event.data === 'string' ? event.data : JSON.stringify(event.data)}\n\n`);
    write(openAiChunk.delta({ role: 'assistant', content: '' }));
    if (kind === 'tool_call') {
      write(openAiChunk.text(`Running the effect of ${key}. `));
      const id = `call_${randomBytes(6).toString('hex')}`;
      write(openAiChunk.toolCall({ index: 0, id, type: 'function', function: { name: 'run_command', arguments: JSON.stringify({ command: command! }) } }));
      write(openAiChunk.finish('tool_calls'));
    } else {
      const hold = this.holds.get(key);
      if (hold) this.holds.delete(key);
      for (const [index, word] of ANSWER_WORDS.entries()) {
        if (response.destroyed) return;
        if (index > 0) await sleep(this.tokenDelayMs);
        if (hold && index === 3) {
          hold(pid);
          // Held until the worker hangs up (it is killed); no more tokens.
          await new Promise<void>((resolve) => response.once('close', () => resolve()));
          return;
        }
        write(openAiChunk.text(word.replace('KEY', key)));
      }
      write(openAiChunk.finish('stop'));
    }
    write(openAiChunk.usage(20, 10));
    write(openAiChunk.done());
    response.end();
  }
}

interface Hit {
  key: string;
  /** The worker whose run_command made the call ($PPID of the shell). */
  pid: number;
  at: number;
}

/**
 * The outside world a side-effecting tool changes: counts each call per turn. A test can hold the
 * next call of a turn (the tool is running, its effect has happened, the worker waits for the answer).
 */
export class EffectServer {
  readonly hits: Hit[] = [];
  private readonly holds = new Map<string, (hit: Hit) => void>();
  private readonly held = new Map<http.ServerResponse, Hit>();
  private readonly server = http.createServer((request, response) => this.handle(request, response));
  url = '';

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this.url;
  }

  async stop(): Promise<void> {
    this.release();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** The shell command a turn's run_command runs: one GET naming the turn and the worker. */
  command(key: string): string {
    return `curl -s -m 60 "${this.url}/effect?key=${key}&ppid=$PPID"`;
  }

  count(key: string): number {
    return this.hits.filter((hit) => hit.key === key).length;
  }

  /** Resolves with the hit once the next call of `key` arrives; its answer waits for `release`. */
  holdNext(key: string): Promise<Hit> {
    return new Promise((resolve) => this.holds.set(key, resolve));
  }

  /** Answers the held calls of worker `pid` (all: every one); its curl, orphaned when the worker died, just ends. */
  release(pid?: number): void {
    for (const [response, hit] of this.held) {
      if (pid !== undefined && hit.pid !== pid) continue;
      response.end('ok');
      this.held.delete(response);
    }
  }

  private handle(request: http.IncomingMessage, response: http.ServerResponse): void {
    const url = new URL(request.url ?? '/', 'http://effect');
    const hit = { key: url.searchParams.get('key') ?? '', pid: Number(url.searchParams.get('ppid')), at: Date.now() };
    this.hits.push(hit);
    const hold = this.holds.get(hit.key);
    if (hold) {
      this.holds.delete(hit.key);
      this.held.set(response, hit);
      hold(hit);
      return;
    }
    response.end(`effect of ${hit.key} done`);
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
