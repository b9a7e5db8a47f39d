import { z } from 'zod';
import { KNOWLEDGE_DEFAULTS } from '../../knowledge/limits';

export const collectionSchema = z
  .object({
    id: z.uuid(),
    name: z.string(),
    document_count: z.number().int(),
    created_at: z.string(),
  })
  .meta({ id: 'KnowledgeCollection' });

export const documentSchema = z
  .object({
    id: z.uuid(),
    collection_id: z.uuid(),
    title: z.string(),
    source: z.string().nullable().describe('The uploaded file name; null for a JSON document.'),
    media_type: z.string(),
    size_bytes: z.number().int(),
    chunk_count: z.number().int(),
    created_at: z.string(),
  })
  .meta({ id: 'KnowledgeDocument' });

export const scoredChunkSchema = z
  .object({
    chunk_id: z.string(),
    collection_id: z.uuid(),
    document_id: z.uuid(),
    title: z.string(),
    source: z.string().nullable(),
    position: z.number().int().describe('The chunk’s place in its document, from 0.'),
    text: z.string(),
    score: z.number().describe('BM25 score; higher is better.'),
  })
  .meta({ id: 'KnowledgeChunk' });

/** Not a UUID, so a collection name and an id can never be confused in knowledge_base_ids. */
export const createCollectionBody = z.strictObject({
  name: z
    .string()
    .trim()
    .min(1)
    .max(100)
    .regex(/^[A-Za-z0-9][A-Za-z0-9 ._-]*$/, 'Letters, digits, space, dot, underscore and hyphen; starting with a letter or digit.')
    .refine((name) => !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(name), 'A name cannot look like a collection id.'),
});

export const textDocumentBody = z.strictObject({
  title: z.string().trim().min(1).max(KNOWLEDGE_DEFAULTS.maxTitleChars),
  text: z.string().min(1),
});

export const uploadBody = z
  .object({
    file: z.string().meta({ format: 'binary' }).describe('The document: .txt, .md, .html or .pdf, at most 20 MiB.'),
    title: z.string().max(KNOWLEDGE_DEFAULTS.maxTitleChars).optional().describe('Default: the file name.'),
  })
  .meta({ id: 'KnowledgeUpload' });

export const searchBody = z.strictObject({
  query: z.string().trim().min(1).max(KNOWLEDGE_DEFAULTS.maxQueryChars),
  top_k: z.number().int().min(1).max(KNOWLEDGE_DEFAULTS.maxTopK).default(KNOWLEDGE_DEFAULTS.defaultTopK),
});

export const collectionParams = z.object({ id: z.string().min(1).max(100).describe('The collection id or name.') });
export const documentParams = collectionParams.extend({ doc_id: z.string().min(1).max(100) });

export const searchResultSchema = z.object({ query: z.string(), results: z.array(scoredChunkSchema) });
