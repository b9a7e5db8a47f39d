/**
 * Holds WebSocket connections for the `idle-sockets` benchmark in a process of its own, so the
 * server's memory figures carry no client sockets and each side has its own file-descriptor limit.
 * Protocol (IPC): receives {open: {urls, headers}}, answers {opened: n} or {failed: message};
 * receives {close: true}, closes everything and answers {closed: true}.
 */
import WebSocket from 'ws';

const sockets: WebSocket[] = [];

function open(url: string, headers: Record<string, string>): Promise<WebSocket> {
  const ws = new WebSocket(url, { headers, perMessageDeflate: false });
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve(ws));
    ws.once('error', reject);
    ws.once('unexpected-response', (_request, response) => reject(new Error(`HTTP ${response.statusCode}`)));
    ws.on('message', () => undefined); // the on-connect agent_state; idle afterwards
  });
}

process.on('message', (message: { open?: { urls: string[]; headers: Record<string, string> }; close?: true }) => {
  void (async () => {
    try {
      if (message.open) {
        const { urls, headers } = message.open;
        // A few dozen handshakes at a time: the server authenticates each one.
        for (let start = 0; start < urls.length; start += 50) {
          sockets.push(...(await Promise.all(urls.slice(start, start + 50).map((url) => open(url, headers)))));
        }
        process.send!({ opened: sockets.length });
      }
      if (message.close) {
        for (const ws of sockets.splice(0)) ws.terminate();
        process.send!({ closed: true });
      }
    } catch (error) {
      process.send!({ failed: error instanceof Error ? error.message : String(error) });
    }
  })();
});
