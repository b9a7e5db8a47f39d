import { DataTypes } from 'sequelize';
import type { Migration } from '../migrator';

/**
 * Knowledge collections, their documents and chunks, and one persisted BM25 index per collection
 * (minisearch JSON with a revision, so every process notices another one's change).
 */
export const knowledge: Migration = {
  name: '0005-knowledge',
  up: async ({ context }) => {
    await context.createTable('knowledge_collections', {
      id: { type: DataTypes.UUID, primaryKey: true },
      name: { type: DataTypes.STRING(100), allowNull: false, unique: true },
      created_at: { type: DataTypes.DATE, allowNull: false },
    });
    await context.createTable('knowledge_documents', {
      ordinal: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
      id: { type: DataTypes.UUID, allowNull: false, unique: true },
      collection_id: { type: DataTypes.UUID, allowNull: false, references: { model: 'knowledge_collections', key: 'id' }, onDelete: 'CASCADE' },
      title: { type: DataTypes.STRING(300), allowNull: false },
      source: { type: DataTypes.STRING(300), allowNull: true },
      media_type: { type: DataTypes.STRING(100), allowNull: false },
      size_bytes: { type: DataTypes.INTEGER, allowNull: false },
      chunk_count: { type: DataTypes.INTEGER, allowNull: false },
      created_at: { type: DataTypes.DATE, allowNull: false },
    });
    await context.addIndex('knowledge_documents', ['collection_id', 'ordinal']);
    await context.createTable('knowledge_chunks', {
      id: { type: DataTypes.STRING(64), primaryKey: true },
      document_id: { type: DataTypes.UUID, allowNull: false, references: { model: 'knowledge_documents', key: 'id' }, onDelete: 'CASCADE' },
      position: { type: DataTypes.INTEGER, allowNull: false },
      text: { type: DataTypes.TEXT, allowNull: false },
    });
    await context.addIndex('knowledge_chunks', ['document_id', 'position'], { unique: true });
    await context.createTable('knowledge_indexes', {
      collection_id: { type: DataTypes.UUID, primaryKey: true, references: { model: 'knowledge_collections', key: 'id' }, onDelete: 'CASCADE' },
      revision: { type: DataTypes.INTEGER, allowNull: false },
      index_json: { type: DataTypes.TEXT, allowNull: false },
      updated_at: { type: DataTypes.DATE, allowNull: false },
    });
  },
  down: async ({ context }) => {
    await context.dropTable('knowledge_indexes');
    await context.dropTable('knowledge_chunks');
    await context.dropTable('knowledge_documents');
    await context.dropTable('knowledge_collections');
  },
};
