import { DataTypes, type Model, type ModelStatic, type Sequelize } from 'sequelize';

export interface RefreshTokenAttributes {
  id: string;
  user_id: string;
  /** sha256 of the opaque token; the token itself is never stored. */
  token_hash: string;
  /** Every token rotated from one login shares a family; reuse of a rotated one revokes it. */
  family_id: string;
  expires_at: Date;
  rotated_at: Date | null;
  revoked_at: Date | null;
  created_at: Date;
}

export type RefreshTokenCreation = Omit<RefreshTokenAttributes, 'rotated_at' | 'revoked_at' | 'created_at'>;
export type RefreshTokenRecord = Model<RefreshTokenAttributes, RefreshTokenCreation> & RefreshTokenAttributes;
export type RefreshTokenModel = ModelStatic<RefreshTokenRecord>;

export function defineRefreshTokenModel(sequelize: Sequelize): RefreshTokenModel {
  return sequelize.define<RefreshTokenRecord>(
    'RefreshToken',
    {
      id: { type: DataTypes.UUID, primaryKey: true },
      user_id: { type: DataTypes.UUID, allowNull: false },
      token_hash: { type: DataTypes.STRING(64), allowNull: false },
      family_id: { type: DataTypes.UUID, allowNull: false },
      expires_at: { type: DataTypes.DATE, allowNull: false },
      rotated_at: { type: DataTypes.DATE, allowNull: true },
      revoked_at: { type: DataTypes.DATE, allowNull: true },
      created_at: { type: DataTypes.DATE },
    },
    { tableName: 'refresh_tokens', timestamps: true, createdAt: 'created_at', updatedAt: false },
  );
}
