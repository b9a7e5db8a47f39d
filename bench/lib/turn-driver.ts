import WebSocket from 'ws';
import { closeSockets, openSocket } from './hub';
import { withTimeout } from './latency';

/** How long one turn may take before the run counts as failed. */
export const TURN_TIMEOUT_MS = 60_000;

export interface TurnRun {
  turns: number;
  seconds: number;
  /** Per turn: user_message sent → `done` received, ms. */
  turnMs: number[];
  /** Per turn: user_message sent → first `token` frame, ms. */
  firstTokenMs: number[];
}

const USER_MESSAGE = JSON.stringify({ type: 'user_message', payload: { text: 'Give me a short answer.', mode: 'normal' } });

/**
 * Opens one socket per URL (after its on-connect frame), then runs `turnsPerSocket` turns on each,
 * back to back (each waits for the previous `done`), all sockets at once. Any `error` frame fails
 * the run: a rate that includes failures measures nothing.
 */
export async function driveTurns(urls: readonly string[], headers: Record<string, string>, turnsPerSocket: number): Promise<TurnRun> {
  const sockets = await Promise.all(urls.map((url) => openSocket(url, headers)));
  try {
    await Promise.all(sockets.map((ws) => nextFrame(ws, (type) => type === 'agent_state')));
    const turnMs: number[] = [];
    const firstTokenMs: number[] = [];
    const started = process.hrtime.bigint();
    await Promise.all(
      sockets.map(async (ws) => {
        for (let turn = 0; turn < turnsPerSocket; turn += 1) {
          const sent = process.hrtime.bigint();
          let firstToken = 0;
          const done = new Promise<void>((resolve, reject) => {
            const onMessage = (data: WebSocket.RawData) => {
              const text = data.toString();
              const type = /^\{"type":"([a-z_]+)"/.exec(text)?.[1];
              if (type === 'token' && firstToken === 0) firstToken = Number(process.hrtime.bigint() - sent) / 1e6;
              if (type === 'error') {
                ws.off('message', onMessage);
                reject(new Error(`error frame: ${text.slice(0, 300)}`));
              }
              if (type === 'done') {
                ws.off('message', onMessage);
                resolve();
              }
            };
            ws.on('message', onMessage);
          });
          ws.send(USER_MESSAGE);
          await withTimeout(done, TURN_TIMEOUT_MS, 'a turn did not end');
          turnMs.push(Number(process.hrtime.bigint() - sent) / 1e6);
          firstTokenMs.push(firstToken);
        }
      }),
    );
    return { turns: urls.length * turnsPerSocket, seconds: Number(process.hrtime.bigint() - started) / 1e9, turnMs, firstTokenMs };
  } finally {
    await closeSockets(sockets);
  }
}

function nextFrame(ws: WebSocket, matches: (type: string | undefined) => boolean): Promise<void> {
  return withTimeout(
    new Promise<void>((resolve) => {
      const onMessage = (data: WebSocket.RawData) => {
        if (!matches(/^\{"type":"([a-z_]+)"/.exec(data.toString())?.[1])) return;
        ws.off('message', onMessage);
        resolve();
      };
      ws.on('message', onMessage);
    }),
    TURN_TIMEOUT_MS,
    'no on-connect frame',
  );
}

export { closeSockets };
