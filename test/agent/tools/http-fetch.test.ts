import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { addressRefusal, type Resolver } from '../../../src/agent/tools/ssrf-guard';
import { call, refusal, registry } from './tool-harness';

/** A local web server standing in for "the internet"; each path answers what the test scripts. */
let server: http.Server;
let port: number;
const hits: string[] = [];

beforeAll(async () => {
  server = http.createServer((request, response) => {
    hits.push(`${request.headers.host} ${request.method} ${request.url}`);
    if (request.url === '/page') {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      response.end('<html><head><style>p{}</style><script>alert(1)</script></head><body><p>Hello &amp; welcome</p></body></html>');
    } else if (request.url === '/big') {
      response.writeHead(200, { 'content-type': 'text/plain' });
      response.end('x'.repeat(5000));
    } else if (request.url === '/image') {
      response.writeHead(200, { 'content-type': 'image/png' });
      response.end(Buffer.from([137, 80, 78, 71]));
    } else if (request.url?.startsWith('/redirect-to?')) {
      response.writeHead(302, { location: decodeURIComponent(request.url.slice('/redirect-to?'.length)) });
      response.end();
    } else if (request.url === '/slow') {
      response.writeHead(200, { 'content-type': 'text/plain' });
      response.write('start');
    } else {
      response.writeHead(404, { 'content-type': 'application/json' });
      response.end('{"error":"not found"}');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});
beforeEach(() => hits.splice(0));

/** Test DNS: public-looking names resolve to the local server, or to whatever the map says. */
function resolver(map: Record<string, string[]>): Resolver {
  return async (hostname) => {
    const addresses = map[hostname];
    if (!addresses) throw Object.assign(new Error(`ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
}

const DNS = resolver({
  'docs.example.test': ['127.0.0.1'],
  'internal.example.test': ['10.0.0.7'],
  'mixed.example.test': ['93.184.216.34', '192.168.0.10'],
  localhost: ['127.0.0.1', '::1'],
});

/** The fake server reachable as docs.example.test only because the test allowlists that name. */
function allowlisted(overrides: Record<string, unknown> = {}) {
  return registry({ http_fetch: { allowed_hosts: ['docs.example.test'], ...overrides } }, { resolve: DNS });
}

function fetchUrl(tools: ReturnType<typeof registry>, url: string) {
  return call(tools, 'http_fetch', JSON.stringify({ url }));
}

describe('http_fetch SSRF guard: refused addresses', () => {
  const tools = registry({}, { resolve: DNS });

  it.each([
    ['http://127.0.0.1:PORT/page', '127.0.0.1 is a loopback address'],
    ['http://localhost:PORT/page', '127.0.0.1 is a loopback address'],
    ['http://[::1]:PORT/page', '::1 is a loopback address'],
    ['http://10.1.2.3/', '10.1.2.3 is a private address'],
    ['http://172.16.5.4/', '172.16.5.4 is a private address'],
    ['http://172.31.255.255/', '172.31.255.255 is a private address'],
    ['http://192.168.1.1/', '192.168.1.1 is a private address'],
    ['http://169.254.169.254/latest/meta-data/', '169.254.169.254 is a link-local address'],
    ['http://[fc00::1]/', 'fc00::1 is a unique-local address'],
    ['http://[fd12:3456::1]/', 'fd12:3456::1 is a unique-local address'],
    ['http://[fe80::1]/', 'fe80::1 is a link-local address'],
    ['http://[::ffff:127.0.0.1]:PORT/page', '127.0.0.1 is a loopback address'],
    ['http://[::ffff:10.0.0.1]/', '10.0.0.1 is a private address'],
    ['http://0.0.0.0:PORT/page', '0.0.0.0 is a unspecified address'],
    ['http://[::]/', ':: is a unspecified address'],
    ['http://224.0.0.1/', '224.0.0.1 is a multicast address'],
    ['http://100.64.0.1/', '100.64.0.1 is a carrier-grade NAT address'],
    ['http://2130706433:PORT/page', '127.0.0.1 is a loopback address'],
    ['http://0x7f.1:PORT/page', '127.0.0.1 is a loopback address'],
    ['http://internal.example.test/', '10.0.0.7 is a private address'],
    ['http://mixed.example.test/', '192.168.0.10 is a private address'],
  ])('%s', async (url, reason) => {
    const error = await refusal(fetchUrl(tools, url.replace('PORT', String(port))));
    expect(error.name).toBe('ToolError');
    expect(error.message).toContain(reason);
    expect(error.message).toMatch(/^Refused to fetch from ".+": .+; http_fetch only reaches public addresses\.$/);
    expect(hits).toEqual([]);
  });

  it('refuses a redirect from an allowed host to a private address, without following it', async () => {
    const error = await refusal(fetchUrl(allowlisted(), `http://docs.example.test:${port}/redirect-to?${encodeURIComponent(`http://127.0.0.1:${port}/page`)}`));
    expect(error.message).toContain('127.0.0.1 is a loopback address');
    expect(hits).toEqual([`docs.example.test:${port} GET /redirect-to?${encodeURIComponent(`http://127.0.0.1:${port}/page`)}`]);
  });

  it('refuses a redirect to a name that resolves to a private address', async () => {
    const error = await refusal(fetchUrl(allowlisted(), `http://docs.example.test:${port}/redirect-to?${encodeURIComponent('http://internal.example.test/')}`));
    expect(error.message).toContain('10.0.0.7 is a private address');
    expect(hits).toHaveLength(1);
  });

  it('classifies addresses: only global unicast passes', () => {
    expect(addressRefusal('93.184.216.34')).toBeNull();
    expect(addressRefusal('2606:4700::1111')).toBeNull();
    expect(addressRefusal('::ffff:8.8.8.8')).toBeNull();
    expect(addressRefusal('64:ff9b::7f00:1')).toMatch(/NAT64/);
    expect(addressRefusal('2002:7f00:1::1')).toMatch(/6to4/);
    expect(addressRefusal('not-an-ip')).toMatch(/not an IP address/);
  });

  it('refuses other schemes, credentials and non-GET shapes by schema', async () => {
    expect((await refusal(fetchUrl(tools, 'file:///etc/passwd'))).message).toBe('Only http:// and https:// URLs can be fetched, not file:.');
    expect((await refusal(fetchUrl(tools, 'http://user:pw@docs.example.test/'))).message).toBe('URLs with credentials are not fetched.');
    expect((await refusal(fetchUrl(tools, 'not a url'))).message).toBe('"not a url" is not a valid URL.');
    expect(tools.validate('http_fetch', '{"url":"http://x/","method":"POST"}')).toEqual({
      ok: false,
      error: 'Invalid arguments for http_fetch: unknown property "method".',
    });
  });
});

describe('http_fetch: allowed fetches', () => {
  it('fetches an allowlisted host (pinned to its checked address), returning status, type and text of the page', async () => {
    const result = await fetchUrl(allowlisted(), `http://docs.example.test:${port}/page`);
    expect(result).toEqual({
      url: `http://docs.example.test:${port}/page`,
      status: 200,
      content_type: 'text/html; charset=utf-8',
      text: 'Hello & welcome',
      truncated: false,
    });
    // The Host header still names the host: only the connection's address was pinned.
    expect(hits).toEqual([`docs.example.test:${port} GET /page`]);
  });

  it('follows a redirect between allowed URLs and reports the final one', async () => {
    const result = await fetchUrl(allowlisted(), `http://docs.example.test:${port}/redirect-to?${encodeURIComponent('/missing')}`);
    expect(result).toMatchObject({
      url: `http://docs.example.test:${port}/missing`,
      status: 404,
      content_type: 'application/json',
      text: '{"error":"not found"}',
    });
  });

  it('caps the body read and the text returned', async () => {
    expect(await fetchUrl(allowlisted({ max_bytes: 1000 }), `http://docs.example.test:${port}/big`)).toMatchObject({ text: 'x'.repeat(1000), truncated: true });
    expect(await fetchUrl(allowlisted({ max_text_chars: 10 }), `http://docs.example.test:${port}/big`)).toMatchObject({
      text: 'x'.repeat(10),
      truncated: true,
    });
  });

  it('does not return binary bodies', async () => {
    expect(await fetchUrl(allowlisted(), `http://docs.example.test:${port}/image`)).toMatchObject({
      status: 200,
      text: null,
      note: 'binary content (image/png) is not shown',
    });
  });

  it('stops after too many redirects', async () => {
    const loop = `http://docs.example.test:${port}/redirect-to?${encodeURIComponent(`http://docs.example.test:${port}/redirect-to?${encodeURIComponent(`http://docs.example.test:${port}/page`)}`)}`;
    expect((await refusal(fetchUrl(allowlisted({ max_redirects: 1 }), loop))).message).toBe('Too many redirects (more than 1).');
  });

  it('gives up on a body that never ends, after its timeout', async () => {
    const started = Date.now();
    const error = await refusal(fetchUrl(allowlisted({ timeout_s: 1 }), `http://docs.example.test:${port}/slow`));
    expect(error.message).toBe(`Fetching http://docs.example.test:${port} was stopped (timed out or cancelled).`);
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it('reaches private addresses only when allow_private is set', async () => {
    const result = await fetchUrl(registry({ http_fetch: { allow_private: true } }, { resolve: DNS }), `http://127.0.0.1:${port}/page`);
    expect(result).toMatchObject({ status: 200, text: 'Hello & welcome' });
  });

  it('reports an unknown host name', async () => {
    expect((await refusal(fetchUrl(allowlisted(), 'http://nowhere.example.test/'))).message).toBe('Cannot resolve the host name "nowhere.example.test".');
  });
});
