import { DataTypes } from 'sequelize';
import type { Migration } from '../migrator';

/** Workflows (the spec's resource) and contacts (chat-channel people, their tags and bound workflow). */
export const workflows: Migration = {
  name: '0004-workflows',
  up: async ({ context }) => {
    await context.createTable('workflows', {
      ordinal: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
      id: { type: DataTypes.UUID, allowNull: false, unique: true },
      name: { type: DataTypes.STRING(64), allowNull: false, unique: true },
      description: { type: DataTypes.TEXT, allowNull: false },
      system_prompt: { type: DataTypes.TEXT, allowNull: false },
      tool_list: { type: DataTypes.TEXT, allowNull: false },
      knowledge_base_ids: { type: DataTypes.JSON, allowNull: false },
      triggers: { type: DataTypes.JSON, allowNull: false },
      binding_channels: { type: DataTypes.JSON, allowNull: false },
      created_at: { type: DataTypes.DATE, allowNull: false },
      updated_at: { type: DataTypes.DATE, allowNull: false },
    });
    await context.createTable('contacts', {
      session_key: { type: DataTypes.STRING(255), primaryKey: true },
      display_name: { type: DataTypes.STRING(200), allowNull: true },
      tags: { type: DataTypes.JSON, allowNull: false },
      workflow_id: { type: DataTypes.UUID, allowNull: true },
      created_at: { type: DataTypes.DATE, allowNull: false },
      updated_at: { type: DataTypes.DATE, allowNull: false },
    });
  },
  down: async ({ context }) => {
    await context.dropTable('contacts');
    await context.dropTable('workflows');
  },
};
