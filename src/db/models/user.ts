import { DataTypes, type Model, type ModelStatic, type Sequelize } from 'sequelize';
import type { Role } from '../../core/principal';

export interface UserAttributes {
  id: string;
  username: string;
  username_key: string;
  email: string;
  password_hash: string | null;
  role: Role;
  is_active: boolean;
  tokens_valid_after: Date | null;
  created_at: Date;
  updated_at: Date;
}

export type UserCreation = Omit<UserAttributes, 'is_active' | 'tokens_valid_after' | 'created_at' | 'updated_at'> & Partial<Pick<UserAttributes, 'is_active'>>;
export type UserRecord = Model<UserAttributes, UserCreation> & UserAttributes;
export type UserModel = ModelStatic<UserRecord>;

export function defineUserModel(sequelize: Sequelize): UserModel {
  return sequelize.define<UserRecord>(
    'User',
    {
      id: { type: DataTypes.UUID, primaryKey: true },
      username: { type: DataTypes.STRING(64), allowNull: false },
      username_key: { type: DataTypes.STRING(64), allowNull: false },
      email: { type: DataTypes.STRING(320), allowNull: false },
      password_hash: { type: DataTypes.STRING(255), allowNull: true },
      role: { type: DataTypes.STRING(16), allowNull: false },
      is_active: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: true },
      tokens_valid_after: { type: DataTypes.DATE, allowNull: true },
      created_at: { type: DataTypes.DATE },
      updated_at: { type: DataTypes.DATE },
    },
    { tableName: 'users', timestamps: true, createdAt: 'created_at', updatedAt: 'updated_at' },
  );
}
