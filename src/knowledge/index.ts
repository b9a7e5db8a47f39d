import type { Database } from '../db/database';
import type { Models } from '../db/models';
import { KnowledgeService } from './knowledge-service';
import { initKnowledgeModels } from './models';

export { KnowledgeService } from './knowledge-service';
export type { CollectionView, DocumentView, NewDocument, ScoredChunk } from './views';
export { formatPassages, parsePassages, PASSAGES_HEADER, type Passage } from '../agent/passages';
export { KNOWLEDGE_DEFAULTS, ACCEPTED_TYPES } from './limits';

/**
 * The knowledge module on an opened, migrated database: collections, documents, the persisted BM25
 * indexes, `resolve` (KnowledgeCollections), `collectionsFor` / `search` (KnowledgeSearch) and
 * `retrieve` for per-turn retrieval. Everything lives in the database, so API processes and workers
 * share it.
 */
export function createKnowledge(database: Database, models: Pick<Models, 'Session' | 'Workflow'>): KnowledgeService {
  return new KnowledgeService(database.sequelize, initKnowledgeModels(database.sequelize), models);
}
