import { randomUUID } from 'node:crypto';
import { Op, QueryTypes, UniqueConstraintError, type Sequelize, type Transaction } from 'sequelize';
import { formatPassages } from '../agent/passages';
import type { KnowledgeHit, KnowledgeSearch } from '../agent/tools/knowledge-search';
import { AppError } from '../core/errors';
import type { Models } from '../db/models';
import type { KnowledgeCollections } from '../workflows/workflow-service';
import { textBatches } from './batches';
import { chunkText } from './chunk';
import { KNOWLEDGE_DEFAULTS } from './limits';
import type { CollectionRow, DocumentRow, KnowledgeModels } from './models';
import { SearchIndexes } from './search-index';
import { chunkId, collectionView, documentView, type CollectionView, type DocumentView, type NewDocument, type ScoredChunk } from './views';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Knowledge collections: storage, ingest (chunk + index) and retrieval. Implements the workflow
 * service's `KnowledgeCollections` (resolve ids or names) and the tool's `KnowledgeSearch`.
 */
export class KnowledgeService implements KnowledgeCollections, KnowledgeSearch {
  readonly indexes: SearchIndexes;
  /** Writes to one collection's index run one at a time in this process (SQLite has no row locks). */
  private readonly writing = new Map<string, Promise<unknown>>();

  constructor(
    private readonly sequelize: Sequelize,
    private readonly models: KnowledgeModels,
    private readonly core: Pick<Models, 'Session' | 'Workflow'>,
  ) {
    this.indexes = new SearchIndexes(models);
  }

  async createCollection(name: string): Promise<CollectionView> {
    const id = randomUUID();
    try {
      const row = await this.sequelize.transaction(async (transaction) => {
        const created = await this.models.Collection.create({ id, name }, { transaction });
        await this.indexes.create(id, transaction);
        return created;
      });
      return collectionView(row, 0);
    } catch (error) {
      if (error instanceof UniqueConstraintError) throw new AppError('CONFLICT', `A collection named "${name}" already exists.`, { details: { name } });
      throw error;
    }
  }

  async listCollections(offset: number, limit: number): Promise<{ items: CollectionView[]; total: number }> {
    const { rows, count } = await this.models.Collection.findAndCountAll({ order: [['name', 'ASC']], offset, limit });
    const counts = await this.documentCounts(rows.map((row) => row.id));
    return { items: rows.map((row) => collectionView(row, counts.get(row.id) ?? 0)), total: count };
  }

  /** A collection by id or name; 404 COLLECTION_NOT_FOUND otherwise. */
  async collection(idOrName: string): Promise<CollectionView> {
    const row = await this.findCollection(idOrName);
    if (!row) throw new AppError('COLLECTION_NOT_FOUND', `No knowledge collection "${idOrName}".`);
    return collectionView(row, (await this.documentCounts([row.id])).get(row.id) ?? 0);
  }

  /** Chunks the text, stores document and chunks and updates the collection's index, all in one transaction. */
  async addDocument(collectionIdOrName: string, document: NewDocument): Promise<DocumentView> {
    const collection = await this.collection(collectionIdOrName);
    const chunks = document.chunks !== undefined ? document.chunks : chunkText(document.text);
    const id = randomUUID();
    // Cut by characters (code points), as the schema counts them: a UTF-16 slice splits a surrogate pair
    // (a 300-emoji title was stored as 150 emoji, the last one half).
    const title = [...document.title].slice(0, KNOWLEDGE_DEFAULTS.maxTitleChars).join('');
    const row = await this.serialised(collection.id, () =>
      this.sequelize.transaction(async (transaction) => {
        const created = await this.models.Document.create(
          {
            id,
            collection_id: collection.id,
            title,
            source: document.source,
            media_type: document.mediaType,
            size_bytes: document.sizeBytes,
            chunk_count: chunks.length,
          },
          { transaction },
        );
        const rows = chunks.map((text, position) => ({ id: chunkId(id, position), document_id: id, position, text }));
        // The index is updated in a worker thread that takes the chunks batch by batch as they are
        // inserted: a large document is never copied between threads (or built into SQL) at once.
        const indexing = await this.indexes.startAdding(collection.id, transaction, title, {
          timeoutMs: KNOWLEDGE_DEFAULTS.prepareTimeoutMs,
          maxHeapMb: KNOWLEDGE_DEFAULTS.prepareMaxHeapMb,
        });
        try {
          for (const batch of textBatches(rows, (row) => row.text)) {
            await insertChunks(this.sequelize, batch, transaction);
            indexing.add(batch);
          }
          await indexing.finish();
        } finally {
          indexing.cancel();
        }
        return created;
      }),
    );
    return documentView(row);
  }

  async document(collectionIdOrName: string, documentId: string): Promise<DocumentView> {
    return documentView(await this.findDocument(collectionIdOrName, documentId));
  }

  /** Removes the document, its chunks and their index entries together. */
  async deleteDocument(collectionIdOrName: string, documentId: string): Promise<DocumentView> {
    const row = await this.findDocument(collectionIdOrName, documentId);
    await this.serialised(row.collection_id, () =>
      this.sequelize.transaction(async (transaction) => {
        const chunks = await this.models.Chunk.findAll({ where: { document_id: row.id }, order: [['position', 'ASC']], transaction });
        // remove() needs the indexed fields as they were, to take exactly their terms out of the index.
        await this.indexes.update(row.collection_id, transaction, (index) => {
          for (const chunk of chunks) if (index.has(chunk.id)) index.remove({ id: chunk.id, title: row.title, text: chunk.text });
        });
        await this.models.Chunk.destroy({ where: { document_id: row.id }, transaction });
        await this.models.Document.destroy({ where: { id: row.id }, transaction });
      }),
    );
    return documentView(row);
  }

  /** REST search of one collection. */
  async searchCollection(collectionIdOrName: string, query: string, topK: number): Promise<ScoredChunk[]> {
    const collection = await this.collection(collectionIdOrName);
    return this.scoredChunks([collection.id], query, topK);
  }

  /** KnowledgeCollections: ids or names → ids (in the order given, without repeats) and the unknown ones. */
  async resolve(idsOrNames: readonly string[]): Promise<{ ids: string[]; missing: string[] }> {
    if (idsOrNames.length === 0) return { ids: [], missing: [] };
    const uuids = idsOrNames.filter((value) => UUID.test(value)).map((value) => value.toLowerCase());
    const rows = await this.models.Collection.findAll({
      where: uuids.length > 0 ? { [Op.or]: [{ id: uuids }, { name: [...idsOrNames] }] } : { name: [...idsOrNames] },
    });
    const ids: string[] = [];
    const missing: string[] = [];
    for (const value of idsOrNames) {
      const row = rows.find((candidate) => candidate.id === value.toLowerCase() || candidate.name === value);
      if (!row) missing.push(value);
      else if (!ids.includes(row.id)) ids.push(row.id);
    }
    return { ids, missing };
  }

  /**
   * A turn's knowledge: the workflow's collections (ids or names) searched for the message, as the
   * system-prompt block the agent reads (null: nothing found). The worker's `TurnKnowledge`.
   */
  async passagesFor(knowledgeBaseIds: readonly string[], query: string): Promise<string | null> {
    const { ids } = await this.resolve(knowledgeBaseIds);
    const hits = await this.retrieve(ids, query, KNOWLEDGE_DEFAULTS.defaultTopK);
    return hits.length > 0 ? formatPassages(hits) : null;
  }

  /**
   * KnowledgeSearch: the collections of the session's active workflow (its knowledge_base_ids,
   * resolved); none without a workflow. Unknown entries are skipped: they cannot be searched.
   */
  async collectionsFor(sessionId: string): Promise<string[]> {
    const session = await this.core.Session.findOne({ where: { id: sessionId }, attributes: ['active_workflow_id'] });
    const workflowRef = session?.active_workflow_id;
    if (!workflowRef) return [];
    const workflow = await this.core.Workflow.findOne({
      where: UUID.test(workflowRef) ? { [Op.or]: [{ id: workflowRef.toLowerCase() }, { name: workflowRef }] } : { name: workflowRef },
      attributes: ['knowledge_base_ids'],
    });
    if (!workflow) return [];
    return (await this.resolve(workflow.knowledge_base_ids ?? [])).ids;
  }

  /** KnowledgeSearch: the best chunks of exactly these collections (never any other). */
  async search(collectionIds: readonly string[], query: string, topK: number): Promise<KnowledgeHit[]> {
    const chunks = await this.scoredChunks(collectionIds, query, topK);
    return chunks.map((chunk) => ({
      collectionId: chunk.collection_id,
      documentId: chunk.document_id,
      title: chunk.title,
      text: chunk.text,
      score: chunk.score,
    }));
  }

  /** Per-turn retrieval for the worker: the same as `search`. */
  retrieve(collectionIds: readonly string[], query: string, topK: number = KNOWLEDGE_DEFAULTS.defaultTopK): Promise<KnowledgeHit[]> {
    return this.search(collectionIds, query, topK);
  }

  private async scoredChunks(collectionIds: readonly string[], query: string, topK: number): Promise<ScoredChunk[]> {
    const scores = await this.indexes.search(collectionIds, query.slice(0, KNOWLEDGE_DEFAULTS.maxQueryChars), Math.min(topK, KNOWLEDGE_DEFAULTS.maxTopK));
    if (scores.length === 0) return [];
    const chunks = await this.models.Chunk.findAll({ where: { id: scores.map((score) => score.chunkId) } });
    const documents = await this.models.Document.findAll({ where: { id: [...new Set(chunks.map((chunk) => chunk.document_id))] } });
    const results: ScoredChunk[] = [];
    for (const score of scores) {
      const chunk = chunks.find((candidate) => candidate.id === score.chunkId);
      const document = chunk && documents.find((candidate) => candidate.id === chunk.document_id);
      // A chunk deleted between the index read and this query is skipped, never invented.
      if (!chunk || !document || document.collection_id !== score.collectionId) continue;
      results.push({
        chunk_id: chunk.id,
        collection_id: document.collection_id,
        document_id: document.id,
        title: document.title,
        source: document.source,
        position: chunk.position,
        text: chunk.text,
        score: Math.round(score.score * 1e4) / 1e4,
      });
    }
    return results;
  }

  private async findCollection(idOrName: string): Promise<CollectionRow | null> {
    if (UUID.test(idOrName)) {
      const byId = await this.models.Collection.findByPk(idOrName.toLowerCase());
      if (byId) return byId;
    }
    return this.models.Collection.findOne({ where: { name: idOrName } });
  }

  private async findDocument(collectionIdOrName: string, documentId: string): Promise<DocumentRow> {
    const collection = await this.collection(collectionIdOrName);
    const row = UUID.test(documentId) ? await this.models.Document.findOne({ where: { id: documentId.toLowerCase(), collection_id: collection.id } }) : null;
    if (!row) throw new AppError('DOCUMENT_NOT_FOUND', `No document ${documentId} in collection "${collection.name}".`);
    return row;
  }

  private async documentCounts(collectionIds: string[]): Promise<Map<string, number>> {
    if (collectionIds.length === 0) return new Map();
    const rows = (await this.models.Document.count({ where: { collection_id: collectionIds }, group: ['collection_id'] })) as unknown as {
      collection_id: string;
      count: number | string;
    }[];
    return new Map(rows.map((row) => [row.collection_id, Number(row.count)]));
  }

  private serialised<T>(collectionId: string, work: () => Promise<T>): Promise<T> {
    const previous = this.writing.get(collectionId) ?? Promise.resolve();
    const next = previous.then(work, work);
    const settled = next.catch(() => undefined);
    this.writing.set(collectionId, settled);
    void settled.then(() => {
      if (this.writing.get(collectionId) === settled) this.writing.delete(collectionId);
    });
    return next;
  }
}

interface ChunkInsert {
  id: string;
  document_id: string;
  position: number;
  text: string;
}

/**
 * One multi-row INSERT of chunk rows with bound parameters: the text goes to the driver as values.
 * `bulkCreate` escaped every character into the SQL and lower-cased the whole statement twice on the
 * event loop (~30–75 ms per 128 KiB batch on a 2-core machine, so a 4 MiB upload held the hub's loop
 * past the cost budget); here the statement is a few hundred bytes of placeholders.
 */
async function insertChunks(sequelize: Sequelize, rows: readonly ChunkInsert[], transaction: Transaction): Promise<void> {
  const placeholders = rows.map((_, index) => `($${index * 4 + 1}, $${index * 4 + 2}, $${index * 4 + 3}, $${index * 4 + 4})`).join(', ');
  await sequelize.query(`INSERT INTO knowledge_chunks (id, document_id, position, text) VALUES ${placeholders}`, {
    bind: rows.flatMap((row) => [row.id, row.document_id, row.position, row.text]),
    transaction,
    type: QueryTypes.INSERT,
  });
}
