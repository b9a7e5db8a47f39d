import type { Tool } from './tool';
import { ToolError } from './tool-error';

export interface WebSearchSettings {
  /** SERVICE_WEB_SEARCH_API_KEY; null: the tool is unavailable. */
  apiKey: string | null;
  /** A Brave-Search-compatible endpoint: GET ?q=&count= with X-Subscription-Token, answering {web: {results}}. */
  endpoint: string;
  timeoutMs: number;
  maxResults: number;
}

export type WebSearchInput = {
  query: string;
  count?: number;
};

interface BraveResult {
  title?: unknown;
  url?: unknown;
  description?: unknown;
}

/** Web search through a configured search API (Brave Search's wire format). */
export function webSearchTool(settings: WebSearchSettings): Tool<WebSearchInput> {
  return {
    name: 'web_search',
    description: 'Search the web; returns titles, URLs and snippets of the top results.',
    parameters: {
      type: 'object',
      properties: {
        query: { type: 'string', minLength: 1, maxLength: 400 },
        count: { type: 'integer', minimum: 1, maximum: settings.maxResults },
      },
      required: ['query'],
      additionalProperties: false,
    },
    requiresConfirmation: false,
    web: true,
    sideEffects: false,
    availability: () => (settings.apiKey ? { ok: true } : { ok: false, reason: 'web_search needs a search API key: set SERVICE_WEB_SEARCH_API_KEY' }),
    async run(input, context) {
      if (!settings.apiKey) throw new ToolError('web_search is not configured (no search API key).');
      const url = new URL(settings.endpoint);
      url.searchParams.set('q', input.query);
      url.searchParams.set('count', String(input.count ?? settings.maxResults));
      const signal = AbortSignal.any([context.signal, AbortSignal.timeout(settings.timeoutMs)]);
      let response: Response;
      try {
        response = await fetch(url, { headers: { accept: 'application/json', 'x-subscription-token': settings.apiKey }, signal });
      } catch (error) {
        throw new ToolError(signal.aborted ? 'The search API did not answer in time.' : 'The search API could not be reached.', { cause: error });
      }
      // The upstream body is not quoted: it may echo the request, key included.
      if (!response.ok) throw new ToolError(`The search API answered HTTP ${response.status}.`);
      let body: { web?: { results?: BraveResult[] } };
      try {
        body = (await response.json()) as typeof body;
      } catch (error) {
        throw new ToolError('The search API sent an answer that is not JSON.', { cause: error });
      }
      const results = (body.web?.results ?? []).slice(0, input.count ?? settings.maxResults).map((result) => ({
        title: String(result.title ?? ''),
        url: String(result.url ?? ''),
        snippet: String(result.description ?? ''),
      }));
      return { query: input.query, results };
    },
  };
}
