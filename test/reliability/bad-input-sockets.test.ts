import { randomUUID } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import WebSocket from 'ws';
import { ERROR_STATUS } from '../../src/core/errors';
import { removeTempDirs } from '../helpers/temp-dir';
import { TestSocket } from '../helpers/ws-client';
import { scaled } from './scale';
import { startBadInputHub, expectRunPassed, type BadInputHub } from './support/bad-input-hub';
import { anyJson, draw, hostileString, ODD_NUMBERS, TRAVERSALS } from './support/bad-input-values';

/**
 * Bad input on the session WebSocket of a real hub process: binary and non-JSON frames, unknown
 * types, missing or wrong payloads, frames over 1 MiB, bursts of 1,000 frames, hostile `last_seq`
 * values, and `write_file` paths that try to leave the workspace (through the built-in model's
 * "write a file … containing …" and a human's allow). Pass: every hostile frame answered by an
 * `error` frame with a 4xx code of the closed set in the server envelope, the socket open (1009 for
 * an oversized frame), seqs strictly increasing after any `last_seq`, turns completing, nothing
 * written outside the workspace, no 5xx, no hang, RSS back within 20 %.
 */

const N = scaled({ frames: 150, bursts: 1, lastSeq: 20, writes: 12 }, { frames: 1_500, bursts: 4, lastSeq: 250, writes: 120 });
const BURST = 1_000;

let hub: BadInputHub;
let rssBaselineKiB = 0;

beforeAll(async () => {
  hub = await startBadInputHub();
}, 120_000);

afterAll(async () => {
  await hub?.stop();
  removeTempDirs();
});

/** True when `file` is a regular file holding exactly `content` (a directory or nothing: false). */
function holds(file: string, content: string): boolean {
  try {
    return statSync(file).isFile() && readFileSync(file, 'utf8') === content;
  } catch {
    return false;
  }
}

function statSafe(file: string): boolean {
  try {
    return statSync(file).isFile();
  } catch {
    return false;
  }
}

async function newSession(): Promise<string> {
  return (await hub.json('POST', '/sessions', { name: 'ws' }))!.json.data.id as string;
}

async function connect(sessionId: string, query = ''): Promise<TestSocket> {
  const ws = new WebSocket(`ws://127.0.0.1:${hub.port}/ws/v1/sessions/${sessionId}${query}`, { headers: hub.auth() });
  const socket = new TestSocket(ws);
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  return socket;
}

/** Checks one server frame: the envelope, and for `error` a 4xx code of the closed set. */
function checkFrame(kind: string, label: string, frame: any, sessionId: string): void {
  const keys = typeof frame === 'object' && frame !== null ? Object.keys(frame).sort().join(',') : '';
  if (keys !== 'payload,seq,session_id,ts,type' || frame.session_id !== sessionId || !Number.isSafeInteger(frame.seq)) {
    hub.violate('envelope', `${kind}: ${label}`, `frame ${JSON.stringify(frame).slice(0, 200)}`);
    return;
  }
  if (frame.type !== 'error') return;
  const status = (ERROR_STATUS as Record<string, number>)[frame.payload.code];
  if (status === undefined || status >= 500 || typeof frame.payload.message !== 'string' || frame.payload.message === '') {
    hub.violate(
      status !== undefined && status >= 500 ? 'server-error' : 'envelope',
      `${kind}: ${label}`,
      `error frame ${JSON.stringify(frame.payload).slice(0, 200)}`,
    );
  }
}

/** Sends a frame and waits for its answer (an error or a pong), counting and checking it. */
async function answerTo(socket: TestSocket, sessionId: string, kind: string, label: string, send: () => void): Promise<any> {
  const seen = socket.frames.length;
  send();
  hub.count(kind);
  try {
    const frame = await socket.next((f) => socket.frames.indexOf(f) >= seen && (f.type === 'error' || f.type === 'pong'), 10_000);
    checkFrame(kind, label, frame, sessionId);
    return frame;
  } catch {
    hub.violate('hang', `${kind}: ${label}`, 'no answer frame in 10 s');
    return null;
  }
}

it('warms up, records the baseline RSS and starts the health probe', async () => {
  const sessionId = await newSession();
  const socket = await connect(sessionId);
  await socket.nextOfType('agent_state');
  socket.send({ type: 'user_message', payload: { text: 'what time is it in Tokyo?' } });
  await socket.nextOfType('done');
  socket.close();
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  rssBaselineKiB = hub.rssKiB();
  hub.startProbe();
});

it('frames: binary, non-JSON, unknown types, missing or wrong payloads, oversized; the socket stays open', async () => {
  const sessionId = await newSession();
  let socket = await connect(sessionId);
  await socket.nextOfType('agent_state');
  const cases = draw(
    fc.oneof(
      fc.record({ kind: fc.constant('binary'), bytes: fc.uint8Array({ maxLength: 256 }) }),
      fc.record({ kind: fc.constant('text'), text: fc.oneof(hostileString(80), fc.constantFrom('', 'null', '[]', '42', '"x"', '{', '{"type":', 'ping')) }),
      fc.record({
        kind: fc.constant('unknown-type'),
        type: fc.oneof(hostileString(20), fc.constantFrom('__proto__', 'constructor', 'toString', 'USER_MESSAGE', 'user_message ', 'log_line', 'done')),
      }),
      fc.record({
        kind: fc.constant('payload'),
        type: fc.constantFrom('user_message', 'tool_confirm', 'ping', 'cancel'),
        payload: anyJson(),
        omit: fc.boolean(),
      }),
      fc.record({ kind: fc.constant('oversized'), extra: fc.constantFrom(1, 100, 1_000_000) }),
    ),
    N.frames,
    31,
  );
  for (const c of cases) {
    if (c.kind === 'oversized') {
      // Over 1,048,576 bytes: closed with 1009; a new connection works.
      socket.ws.send(JSON.stringify({ type: 'ping', payload: { pad: 'p'.repeat(1024 * 1024 + c.extra) } }));
      hub.count('ws-frames');
      const closed = await Promise.race([socket.closed, new Promise<null>((resolve) => setTimeout(() => resolve(null), 10_000))]);
      if (closed?.code !== 1009) hub.violate('unexpected', `ws oversized +${c.extra}`, `closed with ${closed?.code ?? 'nothing'}`);
      socket = await connect(sessionId);
      await socket.nextOfType('agent_state');
      continue;
    }
    const label = JSON.stringify(c).slice(0, 120);
    const send = {
      binary: () => socket.ws.send((c as { bytes: Uint8Array }).bytes, { binary: true }),
      text: () => socket.ws.send((c as { text: string }).text),
      'unknown-type': () => socket.send({ type: (c as { type: string }).type, payload: {} }),
      payload: () => {
        const p = c as { type: string; payload: unknown; omit: boolean };
        socket.send(p.omit ? { type: p.type } : { type: p.type, payload: p.payload });
      },
    }[c.kind]!;
    const frame = await answerTo(socket, sessionId, 'ws-frames', label, send);
    // A user_message that was taken starts a turn: let it finish before the next frame.
    if (frame === null) {
      const started =
        socket.frames.filter((f) => f.type === 'agent_state' && f.payload.state === 'thinking').length >
        socket.frames.filter((f) => f.type === 'done' || (f.type === 'error' && f.payload.turn_id)).length;
      if (started) await socket.nextOfType('done', -Infinity, 10_000).catch(() => undefined);
    }
  }
  // Still open and answering.
  await answerTo(socket, sessionId, 'ws-frames', 'final ping', () => socket.send({ type: 'ping', payload: {} }));
  socket.close();
}, 600_000);

it(`bursts of ${BURST} frames: every one answered, in order, the socket open`, async () => {
  for (let burst = 0; burst < N.bursts; burst += 1) {
    const sessionId = await newSession();
    const socket = await connect(sessionId);
    await socket.nextOfType('agent_state');
    const seen = socket.frames.length;
    for (let index = 0; index < BURST; index += 1) socket.ws.send(index % 2 === 0 ? JSON.stringify({ type: 'ping', payload: {} }) : `not json ${index}`);
    hub.count('ws-bursts', BURST);
    try {
      await socket.next(() => socket.frames.length - seen >= BURST, 30_000);
    } catch {
      hub.violate('hang', `burst ${burst}`, `${socket.frames.length - seen} of ${BURST} answered`);
    }
    const answers = socket.frames.slice(seen);
    for (const frame of answers) checkFrame('ws-bursts', `burst ${burst}`, frame, sessionId);
    const seqs = answers.map((frame) => frame.seq as number);
    if (seqs.some((seq, index) => index > 0 && seq <= seqs[index - 1]!)) hub.violate('unexpected', `burst ${burst}`, 'seqs not strictly increasing');
    socket.close();
  }
}, 600_000);

it('last_seq: non-integers, negative, 2^50, 2^53, NaN; seqs keep increasing and turns complete', async () => {
  const values = draw(
    fc.oneof(fc.constantFrom(...ODD_NUMBERS), fc.bigInt({ min: -(2n ** 64n), max: 2n ** 64n }).map(String), fc.integer({ min: -5, max: 50 }).map(String)),
    N.lastSeq,
    32,
  );
  for (const value of values) {
    const sessionId = await newSession();
    const label = `last_seq=${value.slice(0, 40)}`;
    hub.count('last-seq');
    let socket: TestSocket;
    try {
      socket = await connect(sessionId, `?last_seq=${encodeURIComponent(value)}`);
    } catch (error) {
      hub.violate('unexpected', label, `upgrade refused: ${(error as Error).message}`);
      continue;
    }
    const state = await socket.nextOfType('agent_state').catch(() => null);
    if (!state) {
      hub.violate('hang', label, 'no agent_state on connect');
      socket.close();
      continue;
    }
    socket.send({ type: 'user_message', payload: { text: 'calculate 6 * 7' } });
    const done = await socket.nextOfType('done', -Infinity, 15_000).catch(() => null);
    const seqs = socket.frames.filter((frame) => typeof frame === 'object' && frame.seq !== undefined).map((frame) => frame.seq as number);
    if (!done) hub.violate('hang', label, `the turn did not complete; frames ${JSON.stringify(socket.frames.map((f) => f.type)).slice(0, 200)}`);
    else if (!seqs.every((seq, index) => Number.isSafeInteger(seq) && (index === 0 || seq > seqs[index - 1]!)))
      hub.violate('unexpected', label, `seqs ${JSON.stringify(seqs).slice(0, 200)}`);
    for (const frame of socket.frames) checkFrame('last-seq', label, frame, sessionId);
    socket.close();
    // Reconnecting with the last seq seen replays nothing twice and the session still answers.
    const again = await connect(sessionId, `?last_seq=${seqs.at(-1) ?? -1}`);
    await again.nextOfType('agent_state').catch(() => hub.violate('hang', `${label} reconnect`, 'no agent_state'));
    if (again.frames.some((frame) => frame.type === 'done')) hub.violate('unexpected', `${label} reconnect`, 'replayed a frame already seen');
    again.close();
  }
}, 600_000);

it('write_file paths: nothing is written outside the workspace; what is allowed is there', async () => {
  const marker = randomUUID();
  const cases = draw(
    fc.record({
      traversal: fc.constantFrom(...TRAVERSALS.filter((t) => /^[\w./-]+$/.test(t)), 'notes.txt', 'a/b/c.md', 'ok-file.txt'),
      suffix: fc.constantFrom('', '.txt', '.md'),
    }),
    N.writes,
    33,
  );
  for (const [index, c] of cases.entries()) {
    const file = `${c.traversal}${c.suffix}`;
    const content = `${marker}-${index}`;
    const sessionId = await newSession();
    const socket = await connect(sessionId);
    await socket.nextOfType('agent_state');
    hub.count('path-traversal');
    socket.send({ type: 'user_message', payload: { text: `write a file ${file} containing ${content}` } });
    const request = await socket.next((frame) => frame.type === 'tool_confirm_request' || frame.type === 'done', 15_000).catch(() => null);
    if (request?.type === 'tool_confirm_request')
      socket.send({ type: 'tool_confirm', payload: { confirmation_id: request.payload.confirmation_id, action: 'allow' } });
    const toolEnd = await socket.next((frame) => frame.type === 'tool_end' || frame.type === 'done', 15_000).catch(() => null);
    await socket.nextOfType('done', -Infinity, 15_000).catch(() => hub.violate('hang', `write_file ${file}`, 'no done'));
    for (const frame of socket.frames) checkFrame('path-traversal', `write_file ${file}`, frame, sessionId);
    socket.close();
    const inside = path.resolve(hub.workspaceDir, file);
    const staysInside = inside.startsWith(`${hub.workspaceDir}${path.sep}`) && !file.startsWith('/') && !file.split('/').includes('..');
    if (toolEnd?.type === 'tool_end' && toolEnd.payload.error === null) {
      // Written: it must be inside the workspace, with the content asked for.
      if (!staysInside) hub.violate('unexpected', `write_file ${file}`, 'a path outside the workspace was written');
      else if (!holds(inside, content)) hub.violate('not-stored', `write_file ${file}`, 'reported written, not there');
    } else if (toolEnd?.type === 'tool_end' && !staysInside && holds(inside, content)) {
      hub.violate('unexpected', `write_file ${file}`, 'refused, yet the file is there');
    }
  }
  // No file with the marker exists outside the workspace where the traversals point.
  for (const target of ['/etc/passwd.txt', '/etc/passwd.md', path.resolve(hub.cwd, 'etc/passwd'), path.resolve(hub.workspaceDir, '../../../../etc/passwd')]) {
    if (statSafe(target) && readFileSync(target, 'utf8').includes(marker)) hub.violate('unexpected', `write_file escaped to ${target}`, 'written');
  }
}, 600_000);

it('passes: no crash, no 5xx, no hang, refusals in the envelope, RSS back within 20 %', async () => {
  await expectRunPassed(hub, rssBaselineKiB);
}, 120_000);
