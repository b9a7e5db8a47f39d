import type { CollectionRow, DocumentRow } from './models';

/** What the knowledge API shows of collections, documents and search hits, and how rows become them. */

/** A document to store: its text, cut into chunks when stored, or its chunks already cut (off the event loop: extract.ts). */
export type NewDocument = {
  title: string;
  /** The uploaded file's name; null for a JSON `{title, text}` document. */
  source: string | null;
  mediaType: string;
  sizeBytes: number;
} & ({ text: string; chunks?: undefined } | { chunks: string[]; text?: undefined });

export interface CollectionView {
  id: string;
  name: string;
  document_count: number;
  created_at: string;
}

export interface DocumentView {
  id: string;
  collection_id: string;
  title: string;
  source: string | null;
  media_type: string;
  size_bytes: number;
  chunk_count: number;
  created_at: string;
}

/** A search result: one chunk with its score and where it comes from. */
export interface ScoredChunk {
  chunk_id: string;
  collection_id: string;
  document_id: string;
  title: string;
  source: string | null;
  position: number;
  text: string;
  score: number;
}

export function chunkId(documentId: string, position: number): string {
  return `${documentId}:${position}`;
}

export function collectionView(row: CollectionRow, documentCount: number): CollectionView {
  return { id: row.id, name: row.name, document_count: documentCount, created_at: row.created_at.toISOString() };
}

export function documentView(row: DocumentRow): DocumentView {
  return {
    id: row.id,
    collection_id: row.collection_id,
    title: row.title,
    source: row.source,
    media_type: row.media_type,
    size_bytes: row.size_bytes,
    chunk_count: row.chunk_count,
    created_at: row.created_at.toISOString(),
  };
}
