import http from 'node:http';
import https from 'node:https';

/**
 * The `fetch` the vendor SDKs are given (their `fetch` option): the request over Node's own
 * http/https client with keep-alive agents, and a response whose body is Node's IncomingMessage
 * (async-iterable, as the SDKs' stream cancel and our SSE reader take it). The SDKs keep building the
 * request, retrying, timing out and mapping errors; what goes is the per-request and per-read cost of
 * the WHATWG fetch (Request/Response/Headers objects, web streams, abort-signal plumbing), which a
 * profile of the hub under turn load put at about half a millisecond a turn. Requests this does not
 * handle (a body that is not text or bytes, a `Request` object) go to the global fetch.
 */
export function createLeanFetch(): typeof fetch {
  const agents = { 'http:': new http.Agent({ keepAlive: true }), 'https:': new https.Agent({ keepAlive: true }) };
  const lean = (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
    const body = init.body;
    const simpleBody = body === undefined || body === null || typeof body === 'string' || body instanceof Uint8Array;
    const url = typeof input === 'string' || input instanceof URL ? new URL(input) : null;
    if (!url || !simpleBody || (url.protocol !== 'http:' && url.protocol !== 'https:')) return fetch(input, init);
    return send(url, init, body ?? null, agents[url.protocol]);
  };
  return lean as typeof fetch;
}

function send(url: URL, init: RequestInit, body: string | Uint8Array | null, agent: http.Agent): Promise<Response> {
  const signal = init.signal ?? undefined;
  if (signal?.aborted) return Promise.reject(abortError());
  const headers: Record<string, string> = {};
  new Headers(init.headers).forEach((value, name) => (headers[name] = value));
  if (body !== null) headers['content-length'] = String(typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength);
  const client = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    // `signal`: an abort destroys the request and its response (an AbortError before the headers).
    const request = client.request(url, { method: init.method ?? 'GET', headers, agent, signal }, (response) => {
      resolve(new LeanResponse(response, url.href) as unknown as Response);
    });
    request.once('error', (error: Error) => {
      // The SDKs tell an abort by its name; anything else is a connection failure, as fetch reports it.
      reject(error.name === 'AbortError' ? abortError() : new TypeError('fetch failed', { cause: error }));
    });
    request.end(body ?? undefined);
  });
}

function abortError(): Error {
  return new DOMException('This operation was aborted', 'AbortError');
}

/** What the SDKs read of a fetch Response; `body` is the IncomingMessage itself. */
export class LeanResponse {
  readonly status: number;
  readonly ok: boolean;
  readonly headers = new Headers();
  readonly redirected = false;
  readonly bodyUsed = false;

  constructor(
    readonly body: http.IncomingMessage,
    readonly url: string,
  ) {
    this.status = body.statusCode ?? 0;
    this.ok = this.status >= 200 && this.status < 300;
    const raw = body.rawHeaders;
    for (let index = 0; index + 1 < raw.length; index += 2) this.headers.append(raw[index]!, raw[index + 1]!);
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
