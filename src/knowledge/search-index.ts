import MiniSearch, { type Options, type SearchResult } from 'minisearch';
import type { Transaction } from 'sequelize';
import { startOffThread, type OffThreadLimits } from '../offload/off-thread';
import type { IndexTaskBatch, IndexTaskInput } from './index-task';
import type { KnowledgeModels } from './models';

/** What the index holds per chunk: its id (`<document id>:<position>`), title and text. */
export interface IndexedChunk {
  id: string;
  title: string;
  text: string;
}

/** A document's chunks being added to an index (`SearchIndexes.startAdding`). */
export interface IndexAdding {
  add(chunks: readonly { id: string; text: string }[]): void;
  finish(): Promise<void>;
  cancel(): void;
}

export interface ChunkScore {
  chunkId: string;
  collectionId: string;
  score: number;
}

// Nothing is stored in the index: the text comes back from knowledge_chunks by id.
export const INDEX_OPTIONS: Options<IndexedChunk> = { fields: ['title', 'text'], storeFields: [] };
const SEARCH_OPTIONS = { boost: { title: 0.5 }, prefix: false, fuzzy: false, combineWith: 'OR' } as const;

interface Cached {
  revision: number;
  index: MiniSearch<IndexedChunk>;
}

/**
 * One BM25 (minisearch) index per collection, persisted as JSON in `knowledge_indexes` with a
 * revision. Each process keeps the indexes it has used in memory and reloads one only when its
 * revision in the database moved (another process added or deleted a document), so a restart or a
 * second process never re-reads or re-chunks documents.
 */
export class SearchIndexes {
  private readonly cache = new Map<string, Cached>();
  /** How many indexes were parsed from their stored JSON (tests use it to see what a search cost). */
  loads = 0;

  constructor(private readonly models: KnowledgeModels) {}

  /** An empty index for a new collection, stored with the collection's row. */
  async create(collectionId: string, transaction: Transaction): Promise<void> {
    const index = new MiniSearch<IndexedChunk>(INDEX_OPTIONS);
    await this.models.Index.create({ collection_id: collectionId, revision: 1, index_json: JSON.stringify(index) }, { transaction });
    this.cache.set(collectionId, { revision: 1, index });
  }

  /**
   * Changes a collection's index inside the caller's transaction: reads the stored one (locked on
   * PostgreSQL, so two processes take turns), applies `change`, writes it back with revision + 1.
   * The memory copy is replaced only once the transaction commits.
   */
  async update(collectionId: string, transaction: Transaction, change: (index: MiniSearch<IndexedChunk>) => void): Promise<void> {
    const row = await this.models.Index.findByPk(collectionId, { transaction, lock: transaction.LOCK.UPDATE });
    if (!row) throw new Error(`knowledge collection ${collectionId} has no index row`);
    const index = MiniSearch.loadJSON<IndexedChunk>(row.index_json, INDEX_OPTIONS);
    this.loads += 1;
    change(index);
    const revision = row.revision + 1;
    await this.models.Index.update({ revision, index_json: JSON.stringify(index) }, { where: { collection_id: collectionId }, transaction });
    transaction.afterCommit(() => {
      const cached = this.cache.get(collectionId);
      if (!cached || cached.revision < revision) this.cache.set(collectionId, { revision, index });
    });
  }

  /**
   * Starts adding a document's chunks to a collection's index inside the caller's transaction, like
   * `update`, with the work (parse, tokenise, serialise) in a worker thread (index-task.ts) that is
   * sent the chunks batch by batch (`add`). `finish` stores the new index; this process's memory copy
   * is dropped once the transaction commits and the next search here loads the new revision.
   * `cancel` (after `finish` it does nothing) ends the worker.
   */
  async startAdding(collectionId: string, transaction: Transaction, title: string, limits: OffThreadLimits): Promise<IndexAdding> {
    const row = await this.models.Index.findByPk(collectionId, { transaction, lock: transaction.LOCK.UPDATE });
    if (!row) throw new Error(`knowledge collection ${collectionId} has no index row`);
    const task = await startOffThread<string>(
      require.resolve('./index-task'),
      'addToIndex',
      { indexJson: row.index_json, title } satisfies IndexTaskInput,
      limits,
    );
    return {
      add: (chunks) => task.send(chunks.map(({ id, text }) => ({ id, text })) satisfies IndexTaskBatch),
      finish: async () => {
        const indexJson = await task.finish();
        const revision = row.revision + 1;
        await this.models.Index.update({ revision, index_json: indexJson }, { where: { collection_id: collectionId }, transaction });
        transaction.afterCommit(() => void this.cache.delete(collectionId));
      },
      cancel: () => task.cancel(),
    };
  }

  /** Best chunks over the given collections only, highest score first. */
  async search(collectionIds: readonly string[], query: string, topK: number): Promise<ChunkScore[]> {
    if (collectionIds.length === 0 || query.trim() === '') return [];
    const indexes = await this.current(collectionIds);
    const scores: ChunkScore[] = [];
    for (const [collectionId, index] of indexes) {
      for (const result of index.search(query, SEARCH_OPTIONS) as SearchResult[]) {
        scores.push({ chunkId: String(result.id), collectionId, score: result.score });
      }
    }
    // Ties: by chunk id, so the same query always gives the same order.
    scores.sort((a, b) => b.score - a.score || (a.chunkId < b.chunkId ? -1 : a.chunkId > b.chunkId ? 1 : 0));
    return scores.slice(0, topK);
  }

  forget(collectionId: string): void {
    this.cache.delete(collectionId);
  }

  /** The up-to-date index of each collection: one query for the revisions, a load only for stale ones. */
  private async current(collectionIds: readonly string[]): Promise<Map<string, MiniSearch<IndexedChunk>>> {
    const revisions = await this.models.Index.findAll({ where: { collection_id: [...new Set(collectionIds)] }, attributes: ['collection_id', 'revision'] });
    const result = new Map<string, MiniSearch<IndexedChunk>>();
    for (const { collection_id: collectionId, revision } of revisions) {
      const cached = this.cache.get(collectionId);
      if (cached && cached.revision === revision) {
        result.set(collectionId, cached.index);
        continue;
      }
      const row = await this.models.Index.findByPk(collectionId);
      if (!row) continue; // deleted meanwhile
      const index = MiniSearch.loadJSON<IndexedChunk>(row.index_json, INDEX_OPTIONS);
      this.loads += 1;
      this.cache.set(collectionId, { revision: row.revision, index });
      result.set(collectionId, index);
    }
    return result;
  }
}
