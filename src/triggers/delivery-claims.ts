import { randomUUID } from 'node:crypto';
import { Op } from 'sequelize';
import type { EventDeliveryRow, Models } from '../db/models';
import type { Logger } from '../logs/logger';

/** Deliveries taken up by one sweep at most (the rest wait for the next one). */
const SWEEP_BATCH = 20;
const OPEN: EventDeliveryRow['status'][] = ['verified', 'turn'];

/**
 * Leases on open deliveries (issue 29): the process that stores a delivery holds it and renews the
 * lease while it works on it; at start, and then every third of a lease while the hub has events, a
 * process takes up the deliveries whose lease ran out (their process died) — each by one
 * conditional update, so that exactly one process resumes it. A graceful stop lets go of its leases
 * at once, so the next start resumes them without waiting.
 */
export class DeliveryClaims {
  readonly owner = randomUUID();
  private readonly held = new Set<string>();
  private timer: NodeJS.Timeout | null = null;
  private sweeping: Promise<void> | null = null;

  constructor(
    private readonly models: Models,
    private readonly leaseMs: number,
    private readonly logger: Logger,
    /** Resumes a delivery this process just claimed. */
    private readonly resume: (row: EventDeliveryRow) => void,
    /** Whether any workflow declares events now (no sweeps, no statements otherwise). */
    private readonly active: () => boolean,
  ) {}

  /** The lease columns of a delivery this process stores. */
  lease(): { claimed_by: string; claimed_until: Date } {
    return { claimed_by: this.owner, claimed_until: new Date(Date.now() + this.leaseMs) };
  }

  hold(id: string): void {
    this.held.add(id);
  }

  release(id: string): void {
    this.held.delete(id);
  }

  /** Sweeps once now (awaited), then keeps renewing and sweeping. */
  async start(): Promise<void> {
    await this.sweep();
    this.timer = setInterval(() => void this.tick(), Math.max(250, Math.floor(this.leaseMs / 3)));
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.sweeping;
    await this.models.EventDelivery.update({ claimed_until: null }, { where: { claimed_by: this.owner, status: OPEN } }).catch(() => undefined);
  }

  private async tick(): Promise<void> {
    try {
      if (this.held.size > 0)
        await this.models.EventDelivery.update(
          { claimed_until: new Date(Date.now() + this.leaseMs) },
          { where: { id: [...this.held], claimed_by: this.owner } },
        );
      if (this.active()) await this.sweep();
    } catch (error) {
      this.logger.warn({ err: error }, 'events: renewing or sweeping delivery leases failed');
    }
  }

  private async sweep(): Promise<void> {
    const run = this.sweepOnce();
    this.sweeping = run;
    await run;
  }

  private async sweepOnce(): Promise<void> {
    const now = new Date();
    const expired = { status: OPEN, [Op.or]: [{ claimed_until: null }, { claimed_until: { [Op.lt]: now } }] };
    const rows = await this.models.EventDelivery.findAll({ where: expired, order: [['created_at', 'ASC']], limit: SWEEP_BATCH });
    for (const row of rows) {
      const [taken] = await this.models.EventDelivery.update(this.lease(), { where: { id: row.id, ...expired } });
      if (taken !== 1) continue; // another process took it first
      await row.reload();
      this.held.add(row.id);
      this.logger.info({ delivery_id: row.id, workflow: row.workflow, status: row.status }, 'events: resuming a delivery whose process stopped');
      this.resume(row);
    }
  }
}
