import net from 'node:net';
import { listen, type HttpServer } from '../../src/server/http-server';

// What Node's HTTP parser refuses never reaches express: it is answered in the envelope here.
let http: HttpServer;

beforeAll(async () => {
  http = await listen((_req, res) => res.end('ok'), '127.0.0.1', 0);
});

afterAll(() => http.close(1_000));

function raw(text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(http.port, '127.0.0.1', () => socket.write(text));
    let received = '';
    socket.on('data', (chunk) => (received += chunk.toString('latin1')));
    socket.on('close', () => resolve(received));
    socket.on('error', reject);
  });
}

it.each([
  ['headers over 16 KiB', `GET / HTTP/1.1\r\nHost: x\r\nX-Request-ID: ${'x'.repeat(20_000)}\r\n\r\n`, /larger than the server takes/],
  ['a malformed request line', 'GET / HTTP/9\r\n\r\n', /not valid HTTP/],
  ['a header without a colon', 'GET / HTTP/1.1\r\nHost x\r\n\r\n', /not valid HTTP/],
])('%s: 400 BAD_REQUEST in the envelope, X-Request-ID equal to meta.request_id', async (_label, request, message) => {
  const answer = await raw(request);
  const [head, body] = answer.split('\r\n\r\n');
  expect(head!.split('\r\n')[0]).toBe('HTTP/1.1 400 Bad Request');
  const envelope = JSON.parse(body!);
  expect(envelope).toEqual({
    data: null,
    error: { code: 'BAD_REQUEST', message: expect.stringMatching(message), details: {} },
    meta: { request_id: expect.any(String), timestamp: expect.any(String) },
  });
  expect(head).toContain(`X-Request-ID: ${envelope.meta.request_id}`);
});
