import { DataTypes } from 'sequelize';
import type { Migration } from '../migrator';

/**
 * MCP tool definitions pinned on first sight (issue 28): per server and tool, the SHA-256 of its
 * name, description and input schema as last approved. A server presenting another definition
 * gets the tool withheld until an admin approves the new one.
 */
export const mcpToolPins: Migration = {
  name: '0010-mcp-tool-pins',
  up: async ({ context }) => {
    await context.createTable('mcp_tool_pins', {
      server: { type: DataTypes.STRING(32), primaryKey: true },
      tool: { type: DataTypes.STRING(200), primaryKey: true },
      definition_hash: { type: DataTypes.STRING(64), allowNull: false },
      approved_by: { type: DataTypes.STRING(200), allowNull: true },
      updated_at: { type: DataTypes.DATE, allowNull: false },
    });
  },
  down: async ({ context }) => {
    await context.dropTable('mcp_tool_pins');
  },
};
