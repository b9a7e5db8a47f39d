import { getEventListeners } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLeanFetch } from '../../../src/agent/providers/lean-fetch';

/** A server answering with repeated headers and cookies, and one that never answers `/hang`. */
let server: http.Server;
let base: string;
const seen: http.IncomingHttpHeaders[] = [];

beforeAll(async () => {
  server = http.createServer((request, response) => {
    seen.push(request.headers);
    if (request.url === '/hang') return;
    response.setHeader('X-Request-Id', 'req_1');
    response.setHeader('Set-Cookie', ['a=1', 'b=2']);
    response.setHeader('Vary', ['Accept', 'Origin']);
    response.setHeader('Content-Type', 'text/plain');
    request.resume();
    request.on('end', () => response.end('hello'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe('the providers’ lean fetch', () => {
  it('reads response headers as the WHATWG fetch does (names, joins, cookies, order)', async () => {
    const lean = await createLeanFetch()(`${base}/x`, { method: 'POST', body: 'hi' });
    const standard = await fetch(`${base}/x`, { method: 'POST', body: 'hi' });
    const fromDate = (entries: [string, string][]) => entries.filter(([name]) => name !== 'date');
    expect(fromDate([...lean.headers])).toEqual(fromDate([...standard.headers]));
    expect(lean.headers.get('x-request-ID')).toBe('req_1');
    expect(lean.headers.get('vary')).toBe(standard.headers.get('vary'));
    expect(lean.headers.getSetCookie()).toEqual(['a=1', 'b=2']);
    expect(lean.headers.has('Content-Type')).toBe(true);
    expect(lean.headers.get('missing')).toBeNull();
    // Serialized (an SDK error keeps the headers) it shows no cookie, as Headers shows nothing.
    expect(JSON.stringify(lean.headers)).toBe(JSON.stringify(standard.headers));
    expect(await lean.text()).toBe('hello');
    await standard.text();
  });

  it('sends the given headers with host and content-length', async () => {
    seen.length = 0;
    const response = await createLeanFetch()(`${base}/y`, {
      method: 'POST',
      headers: new Headers({ 'X-Custom': 'one', Accept: 'application/json' }),
      body: 'héllo',
    });
    await response.text();
    expect(seen[0]).toMatchObject({ 'x-custom': 'one', accept: 'application/json', host: base.slice('http://'.length), 'content-length': '6' });
  });

  it('rejects with an AbortError when aborted before the answer, and leaves no listener once a request is done', async () => {
    const fetchLean = createLeanFetch();
    const controller = new AbortController();
    const pending = fetchLean(`${base}/hang`, { signal: controller.signal });
    setTimeout(() => controller.abort(), 20);
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });

    const kept = new AbortController();
    for (let index = 0; index < 3; index += 1) await (await fetchLean(`${base}/z`, { signal: kept.signal })).text();
    await new Promise((resolve) => setImmediate(resolve));
    expect(getEventListeners(kept.signal, 'abort')).toHaveLength(0);
  });

  it('sends a request again, once, on a new connection when the server had closed the kept-alive one', async () => {
    // The server answers a connection's first request and closes the connection when a second one
    // arrives on it: what a client sees when a server's idle timeout closed the connection while the
    // client's event loop was busy (it had not read the close before it reused the connection).
    const requests: { connection: number; index: number }[] = [];
    const closing = http.createServer((request, response) => {
      const socket = request.socket as typeof request.socket & { served?: number; id?: number };
      socket.id ??= requests.length;
      socket.served = (socket.served ?? 0) + 1;
      requests.push({ connection: socket.id, index: socket.served });
      if (socket.served > 1) return void socket.destroy();
      request.resume();
      request.on('end', () => response.end(`answer ${requests.length}`));
    });
    await new Promise<void>((resolve) => closing.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(closing.address() as AddressInfo).port}/v1/chat/completions`;
    try {
      const fetchLean = createLeanFetch();
      expect(await (await fetchLean(url, { method: 'POST', body: '{"n":1}' })).text()).toBe('answer 1');
      expect(await (await fetchLean(url, { method: 'POST', body: '{"n":2}' })).text()).toBe('answer 3');
      // The second request reached the closed connection, then a new one; nothing else was sent.
      expect(requests).toEqual([
        { connection: 0, index: 1 },
        { connection: 0, index: 2 },
        { connection: 2, index: 1 },
      ]);
    } finally {
      closing.closeAllConnections();
      await new Promise((resolve) => closing.close(resolve));
    }
  });

  it('does not send again a request whose new connection was closed: that is the server failing', async () => {
    const refusing = http.createServer((request) => request.socket.destroy());
    await new Promise<void>((resolve) => refusing.listen(0, '127.0.0.1', resolve));
    let attempts = 0;
    refusing.on('request', () => (attempts += 1));
    try {
      const failed = createLeanFetch()(`http://127.0.0.1:${(refusing.address() as AddressInfo).port}/x`, { method: 'POST', body: 'hi' });
      await expect(failed).rejects.toMatchObject({ name: 'TypeError', message: 'fetch failed', cause: { code: 'ECONNRESET' } });
      expect(attempts).toBe(1);
    } finally {
      await new Promise((resolve) => refusing.close(resolve));
    }
  });
});
