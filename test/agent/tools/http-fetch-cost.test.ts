import fc from 'fast-check';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Resolver } from '../../../src/agent/tools/ssrf-guard';
import { EVENT_LOOP_BUDGET_MS, leastEventLoopDelay } from '../../helpers/event-loop';
import { hostileHtml } from '../../reliability/support/hostile-html';
import { call, refusal, registry } from './tool-harness';

/**
 * http_fetch on hostile pages (issue 26): `<a<a<a…` and `<script>` runs made the old regex stripper
 * block the hub 2.2 s at 64 KiB and minutes at the 1 MiB `max_bytes`. The page is now read by
 * html-to-text in a worker thread, bounded in depth, inside the tool's timeout: the event loop stays
 * within the per-request budget whatever the page.
 */

let server: http.Server;
let port: number;
let page = '';
/** How long the server holds the body after the headers (ms). */
let bodyDelayMs = 0;

beforeAll(async () => {
  server = http.createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    const body = page;
    if (bodyDelayMs > 0) setTimeout(() => response.end(body), bodyDelayMs);
    else response.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const DNS: Resolver = async () => [{ address: '127.0.0.1', family: 4 }];
const tools = (overrides: Record<string, unknown> = {}) => registry({ http_fetch: { allowed_hosts: ['pages.example.test'], ...overrides } }, { resolve: DNS });
const fetchPage = (registryOf: ReturnType<typeof registry>) => call(registryOf, 'http_fetch', JSON.stringify({ url: `http://pages.example.test:${port}/` }));

const MIB = 1024 * 1024;

describe('http_fetch on hostile HTML', () => {
  it.each([
    ['<a<a<a… (1 MiB)', '<a'.repeat(MIB / 2)],
    ['<script> runs (1 MiB)', '<script>'.repeat(MIB / 8)],
    ['200,000 nested <div>', '<div>'.repeat(200_000)],
    ['<table><tr><td> nested', '<table><tr><td>'.repeat(60_000)],
  ])(
    '%s: the event loop stays within the budget',
    async (_name, html) => {
      page = html;
      const registryOf = tools();
      const { result, maxDelayMs } = await leastEventLoopDelay(() => fetchPage(registryOf).then(String, (error: Error) => `refused: ${error.message}`));
      expect(maxDelayMs).toBeLessThanOrEqual(EVENT_LOOP_BUDGET_MS);
      expect(result).not.toBe('');
    },
    60_000,
  );

  it('keeps the whole step, parsing included, inside the tool timeout', async () => {
    // Slow to parse (htmlparser2 closes each <p> implied by the next): about 1 s for this page on a
    // quiet 2-core machine. The body arrives 700 ms into the 1 s timeout, so the parse has 300 ms left.
    // (A bigger page is no surer: it can exhaust the parser thread's heap bound first, a refusal of its own.)
    page = '<p>'.repeat(MIB / 3) + '<div><p>'.repeat(100_000);
    bodyDelayMs = 700;
    const started = Date.now();
    const error = await refusal(fetchPage(tools({ timeout_s: 1 }))).finally(() => (bodyDelayMs = 0));
    expect(error.message).toMatch(/stopped \(timed out or cancelled\)/);
    expect(Date.now() - started).toBeLessThan(2_500);
  }, 30_000);

  it('still reads ordinary pages, and says when a page nests too deeply', async () => {
    page = '<html><head><script>alert(1)</script></head><body><h1>Title</h1><p>Hello &amp; <a href="https://example.com/">welcome</a></p></body></html>';
    expect(await fetchPage(tools())).toMatchObject({ text: 'Title\n\nHello & welcome [https://example.com/]', truncated: false });
    page = `<p>top</p>${'<div>'.repeat(2_000)}deep`;
    expect(await fetchPage(tools())).toMatchObject({ text: 'top', note: expect.stringContaining('deeper than 512 levels') });
  });

  it('generated hostile pages (64 KiB): answered, never blocking', async () => {
    const registryOf = tools();
    await fc.assert(
      fc.asyncProperty(hostileHtml(64 * 1024), async (html) => {
        page = html;
        const { maxDelayMs } = await leastEventLoopDelay(() => fetchPage(registryOf).catch(() => null));
        return maxDelayMs <= EVENT_LOOP_BUDGET_MS;
      }),
      { numRuns: 12, seed: 26 },
    );
  }, 120_000);
});
