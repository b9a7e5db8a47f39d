/**
 * The floor program: the least a hub of this protocol must do per turn, on the same machine and
 * drivers — a raw `ws` server and a bare `node:http` route, an in-memory queue, the same fake model
 * as the hub benchmarks, and one durable SQLite insert (WAL, synchronous=NORMAL) per user message
 * and per reply. No auth, no event log, no replay, no routing: every hub figure is reported as a
 * ratio to this one, so "how far from the floor" is always in view.
 *
 * Speaks the session protocol's turn subset: `user_message` → `agent_state thinking`, `token`×N,
 * `done` (or `error TURN_IN_PROGRESS`); REST `POST /api/v1/sessions/{id}/messages` → 202 or 409.
 * Prints `bench floor ready <port>`.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import sqlite3 from 'sqlite3';
import { WebSocketServer, type WebSocket } from 'ws';
import { FixedAnswerProvider, wordTokens } from './models';

const provider = new FixedAnswerProvider(wordTokens(Number(process.env.BENCH_ANSWER_TOKENS ?? '20')));
const CONCURRENCY = 8;
const SESSION_PATH = /^\/(?:ws|api)\/v1\/sessions\/([0-9a-f-]{36})(\/messages)?$/;

const database = new sqlite3.Database(path.join(mkdtempSync(path.join(os.tmpdir(), 'switchboard-floor-')), 'floor.sqlite'));
const run = (sql: string, parameters: unknown[] = []) =>
  new Promise<void>((resolve, reject) => database.run(sql, parameters, (error) => (error ? reject(error) : resolve())));

interface Job {
  sessionId: string;
  messageId: string;
}
const busy = new Set<string>();
const sockets = new Map<string, WebSocket>();
const seqs = new Map<string, number>();
const waiting: Job[] = [];
let running = 0;

function send(sessionId: string, type: string, payload: unknown): void {
  const seq = (seqs.get(sessionId) ?? 0) + 1;
  seqs.set(sessionId, seq);
  sockets.get(sessionId)?.send(JSON.stringify({ type, session_id: sessionId, payload, seq, ts: new Date().toISOString() }));
}

/** Stores the message, marks the session busy and queues the turn; false when a turn runs. */
async function accept(sessionId: string, text: string): Promise<string | null> {
  if (busy.has(sessionId)) return null;
  busy.add(sessionId);
  const messageId = randomUUID();
  await run('INSERT INTO messages (id, session_id, role, content, created_at) VALUES (?, ?, ?, ?, ?)', [
    messageId,
    sessionId,
    'user',
    text,
    new Date().toISOString(),
  ]);
  waiting.push({ sessionId, messageId });
  pump();
  return messageId;
}

function pump(): void {
  while (running < CONCURRENCY && waiting.length > 0) {
    const job = waiting.shift()!;
    running += 1;
    void runTurn(job).finally(() => {
      running -= 1;
      pump();
    });
  }
}

async function runTurn(job: Job): Promise<void> {
  const started = Date.now();
  send(job.sessionId, 'agent_state', { state: 'thinking' });
  let text = '';
  let outputTokens = 0;
  for await (const chunk of provider.stream({ messages: [{ role: 'user', content: '' }], signal: new AbortController().signal })) {
    if (chunk.type !== 'text') continue;
    text += chunk.text;
    outputTokens += 1;
    send(job.sessionId, 'token', { text: chunk.text, final: false });
  }
  const replyId = randomUUID();
  await run('INSERT INTO messages (id, session_id, role, content, created_at) VALUES (?, ?, ?, ?, ?)', [
    replyId,
    job.sessionId,
    'assistant',
    text,
    new Date().toISOString(),
  ]);
  busy.delete(job.sessionId);
  send(job.sessionId, 'done', {
    message_id: replyId,
    total_tokens: outputTokens,
    input_tokens: 0,
    output_tokens: outputTokens,
    duration_ms: Date.now() - started,
    tool_calls: 0,
    text,
  });
}

async function main(): Promise<void> {
  await run('PRAGMA journal_mode = WAL');
  await run('PRAGMA synchronous = NORMAL');
  await run('CREATE TABLE messages (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, role TEXT NOT NULL, content TEXT NOT NULL, created_at TEXT NOT NULL)');
  const server = createServer((request, response) => {
    const match = SESSION_PATH.exec(request.url ?? '');
    if (request.method !== 'POST' || !match?.[2]) {
      response.writeHead(404).end();
      return;
    }
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => (body += chunk));
    request.on('end', () => {
      const { text } = JSON.parse(body) as { text: string };
      void accept(match[1]!, text).then((id) => {
        const status = id ? 202 : 409;
        const answer = id
          ? { data: { id, session_id: match[1], role: 'user', content: text }, error: null }
          : { data: null, error: { code: 'TURN_IN_PROGRESS' } };
        response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
      });
    });
  });
  const wss = new WebSocketServer({ server, perMessageDeflate: false });
  wss.on('connection', (ws, request) => {
    const sessionId = SESSION_PATH.exec(request.url?.split('?')[0] ?? '')?.[1] ?? randomUUID();
    sockets.set(sessionId, ws);
    ws.on('close', () => sockets.get(sessionId) === ws && sockets.delete(sessionId));
    ws.on('message', (data) => {
      const frame = JSON.parse(data.toString()) as { type: string; payload: { text: string } };
      if (frame.type !== 'user_message') return;
      void accept(sessionId, frame.payload.text).then((id) => {
        if (!id) send(sessionId, 'error', { code: 'TURN_IN_PROGRESS', message: 'A turn is running.' });
      });
    });
    send(sessionId, 'agent_state', { state: 'idle' });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  process.stdout.write(`bench floor ready ${(server.address() as AddressInfo).port}\n`);
}

void main();
