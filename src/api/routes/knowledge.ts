import type { Request } from 'express';
import { AppError, type FieldIssues } from '../../core/errors';
import { documentKind, prepareUpload, preparePlainDocument } from '../../knowledge/extract';
import type { KnowledgeService } from '../../knowledge/knowledge-service';
import { ACCEPTED_TYPES } from '../../knowledge/limits';
import { readUpload } from '../../knowledge/upload';
import type { ApiModule } from '../app';
import type { ApiRouter } from '../endpoint';
import { listQueryShape, offsetFromCursor, toPage } from '../pagination';
import { listPage } from '../schemas/envelope';
import {
  collectionParams,
  collectionSchema,
  createCollectionBody,
  documentParams,
  documentSchema,
  searchBody,
  searchResultSchema,
  textDocumentBody,
  uploadBody,
} from '../schemas/knowledge';
import { z } from 'zod';

const tags = ['knowledge'];

/** Knowledge collections (decisions.md §4): writes are admin-only, reading and searching any user. */
export function registerKnowledgeRoutes(api: ApiRouter, knowledge: KnowledgeService): void {
  api.add({
    method: 'post',
    path: '/knowledge/collections',
    summary: 'Create a knowledge collection',
    tags,
    access: 'admin',
    body: createCollectionBody,
    errors: ['CONFLICT'],
    response: { status: 201, description: 'The new collection.', data: collectionSchema },
    handler: ({ body }) => knowledge.createCollection(body.name),
  });

  api.add({
    method: 'get',
    path: '/knowledge/collections',
    summary: 'List knowledge collections, by name',
    tags,
    access: 'user',
    query: z.object(listQueryShape),
    response: { status: 200, description: 'A page of collections.', data: listPage(collectionSchema) },
    handler: async ({ query }) => {
      const offset = offsetFromCursor(query.cursor);
      const { items, total } = await knowledge.listCollections(offset, query.limit);
      return toPage(items, offset, total);
    },
  });

  api.add({
    method: 'post',
    path: '/knowledge/collections/{id}/documents',
    summary: 'Add a document: multipart `file` (txt, md, html, pdf; ≤ 20 MiB) or JSON {title, text}',
    tags,
    access: 'admin',
    params: collectionParams,
    documentedBodies: { 'multipart/form-data': uploadBody, 'application/json': textDocumentBody },
    errors: ['COLLECTION_NOT_FOUND', 'PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE', 'BAD_REQUEST'],
    response: { status: 201, description: 'The stored, indexed document.', data: documentSchema },
    handler: async ({ params, req }) => {
      // The collection is checked first, so a wrong id costs no upload.
      const collection = await knowledge.collection(params.id);
      return knowledge.addDocument(collection.id, await readDocument(req));
    },
  });

  api.add({
    method: 'get',
    path: '/knowledge/collections/{id}/documents/{doc_id}',
    summary: 'Get a document',
    tags,
    access: 'user',
    params: documentParams,
    errors: ['COLLECTION_NOT_FOUND', 'DOCUMENT_NOT_FOUND'],
    response: { status: 200, description: 'The document.', data: documentSchema },
    handler: ({ params }) => knowledge.document(params.id, params.doc_id),
  });

  api.add({
    method: 'delete',
    path: '/knowledge/collections/{id}/documents/{doc_id}',
    summary: 'Delete a document and its passages from the index',
    tags,
    access: 'admin',
    params: documentParams,
    errors: ['COLLECTION_NOT_FOUND', 'DOCUMENT_NOT_FOUND'],
    response: { status: 200, description: 'The deleted document.', data: documentSchema },
    handler: ({ params }) => knowledge.deleteDocument(params.id, params.doc_id),
  });

  api.add({
    method: 'post',
    path: '/knowledge/collections/{id}/search',
    summary: 'Search one collection (BM25): the best chunks, highest score first',
    tags,
    access: 'user',
    params: collectionParams,
    body: searchBody,
    errors: ['COLLECTION_NOT_FOUND'],
    response: { status: 200, description: 'Scored chunks.', data: searchResultSchema },
    handler: async ({ params, body }) => ({ query: body.query, results: await knowledge.searchCollection(params.id, body.query, body.top_k) }),
  });
}

export function knowledgeRoutes(knowledge: KnowledgeService): ApiModule {
  return (api) => registerKnowledgeRoutes(api, knowledge);
}

/** The document of an upload request: multipart file, or JSON {title, text}; anything else is a 415. */
async function readDocument(req: Request) {
  if (req.is('multipart/form-data')) {
    const upload = await readUpload(req);
    const kind = documentKind(upload.fileName, upload.mediaType);
    const sizeBytes = upload.content.length;
    // The content is moved to the worker that reads it: empty here afterwards.
    const { chunks } = await prepareUpload(kind, upload.content);
    return {
      title: upload.title ?? upload.fileName ?? 'Untitled',
      source: upload.fileName,
      mediaType: ACCEPTED_TYPES[kind],
      sizeBytes,
      chunks,
    };
  }
  if (req.is(['application/json', 'application/*+json'])) {
    const parsed = textDocumentBody.safeParse(req.body);
    if (!parsed.success) {
      const fields: FieldIssues = {};
      for (const issue of parsed.error.issues) (fields[issue.path.map(String).join('.') || 'body'] ??= []).push({ code: issue.code, message: issue.message });
      throw AppError.validation(fields);
    }
    const { chunks } = await preparePlainDocument(parsed.data.text);
    return { title: parsed.data.title, source: null, mediaType: 'text/plain', sizeBytes: Buffer.byteLength(parsed.data.text), chunks };
  }
  throw new AppError(
    'UNSUPPORTED_MEDIA_TYPE',
    'Send the document as multipart/form-data (field `file`: txt, md, html or pdf) or as application/json {title, text}.',
    {
      details: { expected: ['multipart/form-data', 'application/json'], accepted: Object.keys(ACCEPTED_TYPES), received: req.get('content-type') ?? null },
    },
  );
}
