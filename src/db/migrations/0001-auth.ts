import { DataTypes, type QueryInterface } from 'sequelize';
import type { Migration } from '../migrator';

/**
 * Auth storage (issue 3): users, refresh tokens, API keys, the first-admin claim and the SAML
 * replay / request caches. Secrets are stored only as hashes.
 */
async function up({ context }: { context: QueryInterface }): Promise<void> {
  const now = { type: DataTypes.DATE, allowNull: false };
  await context.createTable('users', {
    id: { type: DataTypes.UUID, primaryKey: true },
    username: { type: DataTypes.STRING(64), allowNull: false },
    // Lower-cased copy: usernames are unique regardless of case.
    username_key: { type: DataTypes.STRING(64), allowNull: false, unique: true },
    email: { type: DataTypes.STRING(320), allowNull: false, unique: true },
    // Null for users provisioned by SAML: they cannot log in with a password.
    password_hash: { type: DataTypes.STRING(255), allowNull: true },
    role: { type: DataTypes.STRING(16), allowNull: false },
    is_active: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: true },
    // Access tokens issued (iat) before this instant are refused: logout-all, password change.
    tokens_valid_after: { type: DataTypes.DATE, allowNull: true },
    created_at: now,
    updated_at: now,
  });

  // One row at most: whoever inserts it first is the first admin (atomic on SQLite and PostgreSQL).
  await context.createTable('auth_first_admin', {
    id: { type: DataTypes.INTEGER, primaryKey: true },
    user_id: { type: DataTypes.UUID, allowNull: false },
    created_at: now,
  });

  await context.createTable('refresh_tokens', {
    id: { type: DataTypes.UUID, primaryKey: true },
    user_id: { type: DataTypes.UUID, allowNull: false, references: { model: 'users', key: 'id' }, onDelete: 'CASCADE' },
    token_hash: { type: DataTypes.STRING(64), allowNull: false, unique: true },
    family_id: { type: DataTypes.UUID, allowNull: false },
    expires_at: now,
    rotated_at: { type: DataTypes.DATE, allowNull: true },
    revoked_at: { type: DataTypes.DATE, allowNull: true },
    created_at: now,
  });
  await context.addIndex('refresh_tokens', ['family_id']);
  await context.addIndex('refresh_tokens', ['user_id']);

  await context.createTable('api_keys', {
    id: { type: DataTypes.UUID, primaryKey: true },
    user_id: { type: DataTypes.UUID, allowNull: false, references: { model: 'users', key: 'id' }, onDelete: 'CASCADE' },
    label: { type: DataTypes.STRING(100), allowNull: false },
    key_hash: { type: DataTypes.STRING(64), allowNull: false, unique: true },
    key_prefix: { type: DataTypes.STRING(12), allowNull: false },
    expires_at: { type: DataTypes.DATE, allowNull: true },
    last_used_at: { type: DataTypes.DATE, allowNull: true },
    revoked_at: { type: DataTypes.DATE, allowNull: true },
    created_at: now,
  });
  await context.addIndex('api_keys', ['user_id']);

  // Assertion IDs already accepted, kept until the assertion would have expired anyway.
  await context.createTable('saml_assertions', {
    id: { type: DataTypes.STRING(255), primaryKey: true },
    expires_at: now,
    created_at: now,
  });
  // AuthnRequest IDs we issued, so InResponseTo can be checked by any API process.
  await context.createTable('saml_requests', {
    id: { type: DataTypes.STRING(255), primaryKey: true },
    created_at: now,
  });
}

async function down({ context }: { context: QueryInterface }): Promise<void> {
  for (const table of ['saml_requests', 'saml_assertions', 'api_keys', 'refresh_tokens', 'auth_first_admin', 'users']) {
    await context.dropTable(table);
  }
}

export const authMigration: Migration = { name: '0001-auth', up, down };
