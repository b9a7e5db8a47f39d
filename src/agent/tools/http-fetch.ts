import http from 'node:http';
import https from 'node:https';
import { HTML_MAX_DEPTH, htmlText } from '../../offload/html-text';
import { OffThreadTimeout } from '../../offload/off-thread';
import { checkedAddress, pinnedLookup, systemResolver, type AddressPolicy, type Resolver } from './ssrf-guard';
import type { Tool } from './tool';
import { ToolError } from './tool-error';

export interface HttpFetchSettings extends AddressPolicy {
  timeoutMs: number;
  /** Bytes of the body read at most; the rest is not downloaded. */
  maxBytes: number;
  maxRedirects: number;
  /** Characters of text given to the model at most. */
  maxTextChars: number;
}

/** Heap of the worker thread that turns a fetched HTML page into text (the page is at most `maxBytes`). */
export const HTML_TEXT_HEAP_MB = 128;

export type HttpFetchInput = {
  url: string;
};

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
const TEXT_TYPES = /^(text\/|application\/(json|xml|xhtml\+xml|javascript|ld\+json|rss\+xml|atom\+xml)|[^;]*\+json|[^;]*\+xml)/i;
const USER_AGENT = 'Switchboard-http_fetch/1';

/**
 * GET a public web page. Every hop (the URL and each redirect) goes through the SSRF guard, and
 * each connection is pinned to the address the guard checked.
 */
export function httpFetchTool(settings: HttpFetchSettings, resolve: Resolver = systemResolver): Tool<HttpFetchInput> {
  return {
    name: 'http_fetch',
    description: 'Fetch a public web page or API with HTTP GET and return its status, content type and text (truncated).',
    parameters: {
      type: 'object',
      properties: { url: { type: 'string', minLength: 1, maxLength: 2048, description: 'An http:// or https:// URL.' } },
      required: ['url'],
      additionalProperties: false,
    },
    requiresConfirmation: false,
    web: true,
    sideEffects: false,
    availability: () => ({ ok: true }),
    async run(input, context) {
      // The whole step — connecting, reading and turning HTML into text — fits in the timeout.
      const deadline = Date.now() + settings.timeoutMs;
      const signal = AbortSignal.any([context.signal, AbortSignal.timeout(settings.timeoutMs)]);
      let url = parseUrl(input.url);
      for (let hop = 0; ; hop += 1) {
        const response = await get(url, settings, resolve, signal);
        const location = response.headers.location;
        if (!REDIRECT_STATUSES.has(response.statusCode ?? 0) || !location) return await readResponse(url, response, settings, signal, deadline);
        response.destroy();
        if (hop >= settings.maxRedirects) throw new ToolError(`Too many redirects (more than ${settings.maxRedirects}).`);
        url = parseUrl(new URL(location, url).toString());
      }
    },
  };
}

function parseUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ToolError(`"${text}" is not a valid URL.`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ToolError(`Only http:// and https:// URLs can be fetched, not ${url.protocol}.`);
  if (url.username || url.password) throw new ToolError('URLs with credentials are not fetched.');
  return url;
}

async function get(url: URL, settings: HttpFetchSettings, resolve: Resolver, signal: AbortSignal): Promise<http.IncomingMessage> {
  const pinned = await checkedAddress(url.hostname, settings, resolve);
  const transport = url.protocol === 'https:' ? https : http;
  return new Promise((accept, reject) => {
    const request = transport.request(url, {
      method: 'GET',
      // Host, SNI and certificate checks keep using the name; only the address is fixed.
      lookup: pinnedLookup(pinned),
      headers: { 'user-agent': USER_AGENT, accept: 'text/html,application/json,text/plain;q=0.9,*/*;q=0.5' },
      signal,
      // No connection reuse: a pooled socket could lead to an address other than the checked one.
      agent: false,
    });
    request.on('response', accept);
    request.on('error', (error) => reject(transportError(url, error, signal)));
    request.end();
  });
}

async function readResponse(url: URL, response: http.IncomingMessage, settings: HttpFetchSettings, signal: AbortSignal, deadline: number) {
  const contentType = response.headers['content-type'] ?? '';
  const chunks: Buffer[] = [];
  let size = 0;
  let truncated = false;
  try {
    for await (const chunk of response) {
      const buffer = chunk as Buffer;
      if (size + buffer.length > settings.maxBytes) {
        chunks.push(buffer.subarray(0, settings.maxBytes - size));
        size = settings.maxBytes;
        truncated = true;
        break;
      }
      chunks.push(buffer);
      size += buffer.length;
    }
  } catch (error) {
    throw transportError(url, error as Error, signal);
  } finally {
    response.destroy();
  }
  const isText = contentType === '' || TEXT_TYPES.test(contentType);
  let text: string | null = null;
  let note: string | null = isText ? null : `binary content (${contentType}) is not shown`;
  if (isText) {
    text = decode(Buffer.concat(chunks), contentType);
    if (/html/i.test(contentType)) {
      const page = await pageText(url, text, signal, deadline);
      text = page.text;
      if (page.tooDeep) note = `the page nests elements deeper than ${HTML_MAX_DEPTH} levels; its text stops there`;
    }
    if (text.length > settings.maxTextChars) {
      text = text.slice(0, settings.maxTextChars);
      truncated = true;
    }
  }
  return {
    url: url.toString(),
    status: response.statusCode,
    content_type: contentType || null,
    text,
    truncated,
    ...(note ? { note } : {}),
  };
}

/**
 * The readable text of an HTML page, from html-to-text in a worker thread (a hostile page is
 * megabytes of markup built to be slow to parse), within what is left of the tool's timeout.
 */
async function pageText(url: URL, html: string, signal: AbortSignal, deadline: number) {
  try {
    const page = await htmlText(
      { html, maxDepth: HTML_MAX_DEPTH, keepLinks: true },
      { timeoutMs: Math.max(1, deadline - Date.now()), maxHeapMb: HTML_TEXT_HEAP_MB, signal },
    );
    return {
      text: page.text
        .replace(/[ \t]+/g, ' ')
        .replace(/\n{3,}/g, '\n\n')
        .trim(),
      tooDeep: page.tooDeep,
    };
  } catch (error) {
    if (error instanceof OffThreadTimeout) throw new ToolError(`Reading ${url.origin}'s page as text was stopped (timed out or cancelled).`, { cause: error });
    throw new ToolError(`${url.origin}'s page could not be read as text.`, { cause: error });
  }
}

function transportError(url: URL, error: Error, signal: AbortSignal): ToolError {
  if (signal.aborted) return new ToolError(`Fetching ${url.origin} was stopped (timed out or cancelled).`, { cause: error });
  return new ToolError(`Fetching ${url.origin} failed: ${(error as NodeJS.ErrnoException).code ?? 'connection error'}.`, { cause: error });
}

function decode(body: Buffer, contentType: string): string {
  const charset = /charset=["']?([\w-]+)/i.exec(contentType)?.[1] ?? 'utf-8';
  try {
    return new TextDecoder(charset).decode(body);
  } catch {
    return new TextDecoder('utf-8').decode(body);
  }
}
