import { DataTypes } from 'sequelize';
import type { Migration } from '../migrator';

/**
 * Mid-turn policy (issue 17): a workflow may say what a chat message that arrives while a turn runs
 * does (`reject`, `queue`, `steer`, `collect`); null keeps its channel's default.
 */
export const midTurnPolicy: Migration = {
  name: '0008-mid-turn-policy',
  up: async ({ context }) => {
    await context.addColumn('workflows', 'mid_turn', { type: DataTypes.STRING(16), allowNull: true });
  },
  down: async ({ context }) => {
    await context.removeColumn('workflows', 'mid_turn');
  },
};
