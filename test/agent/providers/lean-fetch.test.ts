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
});
