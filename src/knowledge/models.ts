import { DataTypes, Model, type CreationOptional, type InferAttributes, type InferCreationAttributes, type Sequelize } from 'sequelize';

export class CollectionRow extends Model<InferAttributes<CollectionRow>, InferCreationAttributes<CollectionRow>> {
  declare id: string;
  declare name: string;
  declare created_at: CreationOptional<Date>;
}

export class DocumentRow extends Model<InferAttributes<DocumentRow>, InferCreationAttributes<DocumentRow>> {
  declare ordinal: CreationOptional<number>;
  declare id: string;
  declare collection_id: string;
  declare title: string;
  declare source: string | null;
  declare media_type: string;
  declare size_bytes: number;
  declare chunk_count: number;
  declare created_at: CreationOptional<Date>;
}

export class ChunkRow extends Model<InferAttributes<ChunkRow>, InferCreationAttributes<ChunkRow>> {
  /** `<document id>:<position>`: also the chunk's id in the search index. */
  declare id: string;
  declare document_id: string;
  declare position: number;
  declare text: string;
}

export class IndexRow extends Model<InferAttributes<IndexRow>, InferCreationAttributes<IndexRow>> {
  declare collection_id: string;
  declare revision: number;
  declare index_json: string;
  declare updated_at: CreationOptional<Date>;
}

export interface KnowledgeModels {
  Collection: typeof CollectionRow;
  Document: typeof DocumentRow;
  Chunk: typeof ChunkRow;
  Index: typeof IndexRow;
}

/** The knowledge tables of migration 0005, bound to one database (a subclass per database, like src/db/models). */
export function initKnowledgeModels(sequelize: Sequelize): KnowledgeModels {
  const Collection = class extends CollectionRow {};
  Collection.init(
    {
      id: { type: DataTypes.UUID, primaryKey: true },
      name: { type: DataTypes.STRING(100), allowNull: false, unique: true },
      created_at: { type: DataTypes.DATE, allowNull: false },
    },
    { sequelize, tableName: 'knowledge_collections', timestamps: true, createdAt: 'created_at', updatedAt: false },
  );
  const Document = class extends DocumentRow {};
  Document.init(
    {
      ordinal: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
      id: { type: DataTypes.UUID, allowNull: false, unique: true },
      collection_id: { type: DataTypes.UUID, allowNull: false },
      title: { type: DataTypes.STRING(300), allowNull: false },
      source: { type: DataTypes.STRING(300), allowNull: true },
      media_type: { type: DataTypes.STRING(100), allowNull: false },
      size_bytes: { type: DataTypes.INTEGER, allowNull: false },
      chunk_count: { type: DataTypes.INTEGER, allowNull: false },
      created_at: { type: DataTypes.DATE, allowNull: false },
    },
    { sequelize, tableName: 'knowledge_documents', timestamps: true, createdAt: 'created_at', updatedAt: false },
  );
  const Chunk = class extends ChunkRow {};
  Chunk.init(
    {
      id: { type: DataTypes.STRING(64), primaryKey: true },
      document_id: { type: DataTypes.UUID, allowNull: false },
      position: { type: DataTypes.INTEGER, allowNull: false },
      text: { type: DataTypes.TEXT, allowNull: false },
    },
    { sequelize, tableName: 'knowledge_chunks', timestamps: false },
  );
  const Index = class extends IndexRow {};
  Index.init(
    {
      collection_id: { type: DataTypes.UUID, primaryKey: true },
      revision: { type: DataTypes.INTEGER, allowNull: false },
      index_json: { type: DataTypes.TEXT, allowNull: false },
      updated_at: { type: DataTypes.DATE, allowNull: false },
    },
    { sequelize, tableName: 'knowledge_indexes', timestamps: true, createdAt: false, updatedAt: 'updated_at' },
  );
  return { Collection, Document, Chunk, Index };
}
