import { DataTypes } from 'sequelize';
import type { Migration } from '../migrator';

/**
 * A channel's fallback workflow (issue 33): `default: true` on a workflow makes it answer, on the
 * channels it is bound to, the messages no workflow's triggers match (instead of the config default).
 */
export const defaultWorkflow: Migration = {
  name: '0012-default-workflow',
  up: async ({ context }) => {
    await context.addColumn('workflows', 'is_default', { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false });
  },
  down: async ({ context }) => {
    await context.removeColumn('workflows', 'is_default');
  },
};
