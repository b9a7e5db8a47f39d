import http from 'node:http';
import https from 'node:https';
import { LeanHeaders } from './lean-headers';

/**
 * The `fetch` the vendor SDKs are given (their `fetch` option): the request over Node's own
 * http/https client with keep-alive agents, and a response whose body is Node's IncomingMessage
 * (async-iterable, as the SDKs' stream cancel and our SSE reader take it). The SDKs keep building the
 * request, retrying, timing out and mapping errors; what goes is the per-request and per-read cost of
 * the WHATWG fetch (Request/Response/Headers objects, web streams, abort-signal plumbing), which a
 * profile of the hub under turn load put at about half a millisecond a turn. Requests this does not
 * handle (a body that is not text or bytes, a `Request` object) go to the global fetch.
 *
 * Per request it does no more than the request needs: the SDK's headers go to Node as one flat array
 * (written as they are, no per-header `setHeader`), the URL of a string seen before is reused, the
 * abort listener is removed when the request closes (no `signal` option, whose stream-end tracking
 * costs more than the request's own listeners), and the response headers are a plain map
 * (`LeanHeaders`) rather than a WHATWG `Headers` filled one validated append at a time.
 *
 * A request that finds its kept-alive connection closed by the server (an idle timeout racing a busy
 * event loop) is sent once more on a new connection; fetch's own undici does the same for requests
 * it may replay, and without it a turn failed (`max_retries: 0`) or waited for the SDK's back-off.
 */
export function createLeanFetch(): typeof fetch {
  const agents = { 'http:': new http.Agent({ keepAlive: true }), 'https:': new https.Agent({ keepAlive: true }) };
  const urls = new UrlCache();
  const lean = (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
    const body = init.body;
    const simpleBody = body === undefined || body === null || typeof body === 'string' || body instanceof Uint8Array;
    const url = typeof input === 'string' ? urls.get(input) : input instanceof URL ? input : null;
    if (!url || !simpleBody || (url.protocol !== 'http:' && url.protocol !== 'https:')) return fetch(input, init);
    return send(url, init, body ?? null, agents[url.protocol]);
  };
  return lean as typeof fetch;
}

/** Parsed URLs by their text: an SDK calls the same few endpoints, so each is parsed once. */
class UrlCache {
  private readonly parsed = new Map<string, URL>();

  get(text: string): URL {
    let url = this.parsed.get(text);
    if (url) return url;
    url = new URL(text);
    // Bounded: URLs with changing queries (not the providers' own calls) only cost a parse each.
    if (this.parsed.size >= 32) this.parsed.clear();
    this.parsed.set(text, url);
    return url;
  }
}

function send(url: URL, init: RequestInit, body: string | Uint8Array | null, agent: http.Agent, retried = false): Promise<Response> {
  const signal = init.signal ?? undefined;
  if (signal?.aborted) return Promise.reject(abortError());
  const headers = flatHeaders(init.headers, url, body);
  const client = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    let answered = false;
    const request = client.request(url, { method: init.method ?? 'GET', headers, agent }, (response) => {
      answered = true;
      resolve(new LeanResponse(response, url.href) as unknown as Response);
    });
    if (signal) {
      // An abort destroys the request and its response (an AbortError before the headers).
      const onAbort = () => request.destroy(abortError());
      signal.addEventListener('abort', onAbort, { once: true });
      request.once('close', () => signal.removeEventListener('abort', onAbort));
    }
    request.once('error', (error: NodeJS.ErrnoException) => {
      if (!retried && !answered && request.reusedSocket && STALE_CONNECTION.has(error.code ?? '') && !signal?.aborted) {
        // The server closed this idle kept-alive connection as the request went out (its idle
        // timeout, while our event loop was busy and had not read the close): it never read the
        // request. Sent again at once on a new connection, as Node's docs advise for `reusedSocket`;
        // the SDK's own retries (with their back-off) stay for servers that fail.
        resolve(send(url, init, body, agent, true));
        return;
      }
      // The SDKs tell an abort by its name; anything else is a connection failure, as fetch reports it.
      reject(error.name === 'AbortError' ? abortError() : new TypeError('fetch failed', { cause: error }));
    });
    request.end(body ?? undefined);
  });
}

/** How a request on a connection the server had already closed fails ("socket hang up" is ECONNRESET). */
const STALE_CONNECTION = new Set(['ECONNRESET', 'EPIPE']);

/** The request headers as Node's flat [name, value, …] array, with `host` and `content-length` as fetch adds them. */
function flatHeaders(init: RequestInit['headers'], url: URL, body: string | Uint8Array | null): string[] {
  const flat: string[] = [];
  let host = false;
  // The SDKs hand a Headers; anything else is read through one.
  (init instanceof Headers ? init : new Headers(init)).forEach((value, name) => {
    if (name === 'host') host = true;
    if (name !== 'content-length') flat.push(name, value);
  });
  if (!host) flat.push('host', url.host);
  if (body !== null) flat.push('content-length', String(typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength));
  return flat;
}

function abortError(): Error {
  return new DOMException('This operation was aborted', 'AbortError');
}

/** What the SDKs read of a fetch Response; `body` is the IncomingMessage itself. */
export class LeanResponse {
  readonly status: number;
  readonly ok: boolean;
  readonly headers: Headers;
  readonly redirected = false;
  readonly bodyUsed = false;

  constructor(
    readonly body: http.IncomingMessage,
    readonly url: string,
  ) {
    this.status = body.statusCode ?? 0;
    this.ok = this.status >= 200 && this.status < 300;
    this.headers = new LeanHeaders(body.rawHeaders) as unknown as Headers;
  }

  async text(): Promise<string> {
    const chunks: Buffer[] = [];
    for await (const chunk of this.body) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString('utf8');
  }

  async json(): Promise<unknown> {
    return JSON.parse(await this.text()) as unknown;
  }
}
