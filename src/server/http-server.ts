import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RequestListener } from 'node:http';
import type { Duplex } from 'node:stream';

/** Node's default (5 s) is shorter than common load-balancer idle timeouts; keep connections a bit longer. */
export const KEEP_ALIVE_TIMEOUT_MS = 65_000;

/** While closing, how often connections that finished their last response are closed. */
export const IDLE_SWEEP_INTERVAL_MS = 50;

export interface HttpServer {
  server: Server;
  port: number;
  /** Stops accepting, lets in-flight requests finish for up to `timeoutMs`, then cuts what is left. */
  close(timeoutMs: number): Promise<void>;
}

/**
 * Listens on `host:port`. A taken or forbidden port fails with a message that says which port and
 * how to choose another (it ends startup as one line on stderr, exit status 1).
 */
export async function listen(handler: RequestListener, host: string, port: number): Promise<HttpServer> {
  const server = createServer({ keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS }, handler);
  server.on('clientError', answerUnparsable);
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => reject(describeListenError(error, host, port)));
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    server,
    port: (server.address() as AddressInfo).port,
    close: (timeoutMs) =>
      new Promise<void>((resolve) => {
        const force = setTimeout(() => server.closeAllConnections(), timeoutMs);
        // A keep-alive connection becomes idle once its in-flight response is sent; close it then,
        // rather than waiting for the keep-alive timeout.
        const sweep = setInterval(() => server.closeIdleConnections(), IDLE_SWEEP_INTERVAL_MS);
        server.close(() => {
          clearTimeout(force);
          clearInterval(sweep);
          resolve();
        });
        server.closeIdleConnections();
      }),
  };
}

/**
 * A request Node's parser refuses before any handler sees it (headers over 16 KiB, a malformed
 * request line or header): Node would answer an empty 431 or 400. Answered instead in the
 * documented envelope, as 400 BAD_REQUEST (the closed set has no 431), and the connection closed.
 */
function answerUnparsable(error: NodeJS.ErrnoException, socket: Duplex): void {
  if (error.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const requestId = randomUUID();
  const message = error.code === 'HPE_HEADER_OVERFLOW' ? 'The request headers are larger than the server takes (16 KiB).' : 'The request is not valid HTTP.';
  const body = JSON.stringify({
    data: null,
    error: { code: 'BAD_REQUEST', message, details: {} },
    meta: { request_id: requestId, timestamp: new Date().toISOString() },
  });
  socket.end(
    `HTTP/1.1 400 Bad Request\r\nContent-Type: application/json; charset=utf-8\r\nX-Request-ID: ${requestId}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

function describeListenError(error: NodeJS.ErrnoException, host: string, port: number): Error {
  const choose = `pick another port: SERVICE_PORT=${port === 65_535 ? 8001 : port + 1} npm start (or server.port in config.yaml)`;
  if (error.code === 'EADDRINUSE') {
    return new Error(`port ${port} on ${host} is already in use (another Switchboard or another program listens there); stop it, or ${choose}`, {
      cause: error,
    });
  }
  if (error.code === 'EACCES') return new Error(`port ${port} on ${host} needs privileges this process lacks; ${choose}`, { cause: error });
  if (error.code === 'EADDRNOTAVAIL')
    return new Error(`address ${host} is not an address of this machine; set SERVICE_HOST (e.g. 0.0.0.0 or 127.0.0.1)`, { cause: error });
  return error;
}
