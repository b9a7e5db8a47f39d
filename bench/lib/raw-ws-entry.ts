/**
 * The token-stream baseline in a process of its own (like the hubs it is compared with): a bare
 * `ws` server that answers any client frame with BENCH_FRAMES copies of BENCH_FRAME in a plain send
 * loop, then `{"type":"done"}`. Prints `bench floor ready <port>`.
 */
import type { AddressInfo } from 'node:net';
import { WebSocketServer } from 'ws';

const frame = process.env.BENCH_FRAME ?? '{"type":"token"}';
const count = Number(process.env.BENCH_FRAMES ?? '1000');
const server = new WebSocketServer({ host: '127.0.0.1', port: 0, perMessageDeflate: false });
server.on('connection', (ws) =>
  ws.on('message', () => {
    for (let index = 0; index < count; index += 1) ws.send(frame);
    ws.send('{"type":"done"}');
  }),
);
server.once('listening', () => process.stdout.write(`bench floor ready ${(server.address() as AddressInfo).port}\n`));
