import type { AddressInfo } from 'node:net';
import { WebSocketServer } from 'ws';

export interface EchoServer {
  url: string;
  close(): Promise<void>;
}

/** A bare `ws` server that sends every text frame straight back: the floor for a WS round trip. */
export async function startEchoServer(): Promise<EchoServer> {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, perMessageDeflate: false });
  await new Promise<void>((resolve) => wss.once('listening', resolve));
  wss.on('connection', (ws) => ws.on('message', (data, isBinary) => ws.send(data, { binary: isBinary })));
  return {
    url: `ws://127.0.0.1:${(wss.address() as AddressInfo).port}`,
    close: () =>
      new Promise((resolve) => {
        for (const client of wss.clients) client.terminate();
        wss.close(() => resolve());
      }),
  };
}
