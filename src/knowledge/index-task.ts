import MiniSearch from 'minisearch';
import { INDEX_OPTIONS, type IndexedChunk } from './search-index';

/**
 * Adding a document's chunks to a collection's BM25 index — parsing the stored index, tokenising
 * every chunk, serialising it again — costs seconds for a large document (4 MiB of text: ~2 s). It
 * runs here, in a worker thread (search-index.ts starts it), never on the event loop.
 */
export interface IndexTaskInput {
  indexJson: string;
  chunks: IndexedChunk[];
}

/** The index with the chunks added, serialised. */
export function addToIndex(input: IndexTaskInput): string {
  const index = MiniSearch.loadJSON<IndexedChunk>(input.indexJson, INDEX_OPTIONS);
  index.addAll(input.chunks);
  return JSON.stringify(index);
}
