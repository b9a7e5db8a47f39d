import { DataTypes, type Model, type ModelStatic, type Sequelize } from 'sequelize';

export interface ApiKeyAttributes {
  id: string;
  user_id: string;
  label: string;
  /** sha256 of the key; the key itself is shown once and never stored. */
  key_hash: string;
  /** The first 12 characters (`svc_live_` + 3), so a user can tell keys apart. */
  key_prefix: string;
  expires_at: Date | null;
  last_used_at: Date | null;
  revoked_at: Date | null;
  created_at: Date;
}

export type ApiKeyCreation = Omit<ApiKeyAttributes, 'last_used_at' | 'revoked_at' | 'created_at'>;
export type ApiKeyRecord = Model<ApiKeyAttributes, ApiKeyCreation> & ApiKeyAttributes;
export type ApiKeyModel = ModelStatic<ApiKeyRecord>;

export function defineApiKeyModel(sequelize: Sequelize): ApiKeyModel {
  return sequelize.define<ApiKeyRecord>(
    'ApiKey',
    {
      id: { type: DataTypes.UUID, primaryKey: true },
      user_id: { type: DataTypes.UUID, allowNull: false },
      label: { type: DataTypes.STRING(100), allowNull: false },
      key_hash: { type: DataTypes.STRING(64), allowNull: false },
      key_prefix: { type: DataTypes.STRING(12), allowNull: false },
      expires_at: { type: DataTypes.DATE, allowNull: true },
      last_used_at: { type: DataTypes.DATE, allowNull: true },
      revoked_at: { type: DataTypes.DATE, allowNull: true },
      created_at: { type: DataTypes.DATE },
    },
    { tableName: 'api_keys', timestamps: true, createdAt: 'created_at', updatedAt: false },
  );
}
