import type { Tool } from './tool';
import { ToolError } from './tool-error';

/** One scored passage of a knowledge collection. */
export interface KnowledgeHit {
  collectionId: string;
  documentId: string;
  title: string;
  text: string;
  score: number;
}

/**
 * Search over knowledge collections (implemented with the workflows issue). The tool asks which
 * collections a session may search (its workflow's knowledge_base_ids), then searches those.
 */
export interface KnowledgeSearch {
  collectionsFor(sessionId: string): Promise<string[]>;
  search(collectionIds: readonly string[], query: string, topK: number): Promise<KnowledgeHit[]>;
}

export const KNOWLEDGE_SEARCH_DEFAULTS = {
  topK: 5,
  maxTopK: 20,
} as const;

export type KnowledgeSearchInput = {
  query: string;
  top_k: number;
};

export function knowledgeSearchTool(knowledge: KnowledgeSearch | undefined): Tool<KnowledgeSearchInput> {
  return {
    name: 'knowledge_search',
    description: "Search the knowledge collections of this conversation's workflow; returns the best-matching passages with their source.",
    parameters: {
      type: 'object',
      properties: {
        query: { type: 'string', minLength: 1, maxLength: 1000 },
        top_k: { type: 'integer', minimum: 1, maximum: KNOWLEDGE_SEARCH_DEFAULTS.maxTopK, default: KNOWLEDGE_SEARCH_DEFAULTS.topK },
      },
      required: ['query'],
      additionalProperties: false,
    },
    requiresConfirmation: false,
    web: false,
    sideEffects: false,
    availability: () => (knowledge ? { ok: true } : { ok: false, reason: 'knowledge collections are not configured on this hub' }),
    async run(input, context) {
      if (!knowledge) throw new ToolError('Knowledge collections are not configured on this hub.');
      const collections = await knowledge.collectionsFor(context.sessionId);
      if (collections.length === 0) throw new ToolError("This conversation's workflow has no knowledge collections to search.");
      const hits = await knowledge.search(collections, input.query, input.top_k ?? KNOWLEDGE_SEARCH_DEFAULTS.topK);
      return {
        query: input.query,
        results: hits.map((hit) => ({ collection_id: hit.collectionId, document_id: hit.documentId, title: hit.title, text: hit.text, score: hit.score })),
      };
    },
  };
}
