import MiniSearch from 'minisearch';
import type { OffThreadTaskIo } from '../offload/off-thread';
import { INDEX_OPTIONS, type IndexedChunk } from './search-index';

/**
 * Adding a document's chunks to a collection's BM25 index — parsing the stored index, tokenising
 * every chunk, serialising it again — costs seconds for a large document (4 MiB of text: ~2 s). It
 * runs here, in a worker thread (search-index.ts starts it), never on the event loop.
 */
export interface IndexTaskInput {
  indexJson: string;
  /** The document's title, indexed with every chunk. */
  title: string;
}

/** One batch of the document's chunks, as the caller sends them (`io.received()`). */
export type IndexTaskBatch = { id: string; text: string }[];

/** The index with every batch received added, serialised. */
export async function addToIndex(input: IndexTaskInput, io: OffThreadTaskIo): Promise<string> {
  const index = MiniSearch.loadJSON<IndexedChunk>(input.indexJson, INDEX_OPTIONS);
  for await (const batch of io.received()) {
    for (const chunk of batch as IndexTaskBatch) index.add({ id: chunk.id, title: input.title, text: chunk.text });
  }
  return JSON.stringify(index);
}
