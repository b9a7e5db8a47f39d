import { DataTypes } from 'sequelize';
import type { Migration } from '../migrator';

/**
 * Deliveries survive a crash (issue 29): the rendered message is kept (a delivery stored before its
 * turn started can start it later), and the process working on a delivery holds a lease on it
 * (`claimed_by`, renewed until `claimed_until`), so that a delivery whose process died is picked up
 * by the next start or by another API process, once.
 */
export const eventDeliveryClaims: Migration = {
  name: '0014-event-delivery-claims',
  up: async ({ context }) => {
    await context.addColumn('event_deliveries', 'message', { type: DataTypes.TEXT, allowNull: true });
    await context.addColumn('event_deliveries', 'claimed_by', { type: DataTypes.STRING(64), allowNull: true });
    await context.addColumn('event_deliveries', 'claimed_until', { type: DataTypes.DATE, allowNull: true });
    await context.addIndex('event_deliveries', ['status', 'claimed_until'], { name: 'event_deliveries_open' });
  },
  down: async ({ context }) => {
    await context.removeIndex('event_deliveries', 'event_deliveries_open');
    await context.removeColumn('event_deliveries', 'claimed_until');
    await context.removeColumn('event_deliveries', 'claimed_by');
    await context.removeColumn('event_deliveries', 'message');
  },
};
