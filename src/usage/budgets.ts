import type { Config } from '../config';
import { AppError } from '../core/errors';
import { type UsageQuery, type UsageToday } from '../db/turn-store';
import { usageDay } from '../db/turn-store-rows';

type BudgetSettings = Readonly<Config>['usage']['budgets'];

/** What the budgets need to know of workflows and users (the router's in-memory copy, the users table). */
export interface BudgetLookups {
  workflowIdByName(name: string): Promise<string | null>;
  /** The username of a user id (null for a chat contact or an unknown id). */
  usernameOf(userId: string): Promise<string | null>;
}

/**
 * Daily token budgets (`usage.budgets`): per user (or chat contact) and per workflow, UTC days.
 * Checked when a worker starts a turn, from today's usage read in the conversation's own
 * statement; a turn over budget is refused with BUDGET_EXCEEDED before the model is called. Soft:
 * turns already running finish, so concurrent turns may go past a budget by what they spend.
 */
export class DailyBudgets {
  private readonly usernames = new Map<string, string | null>();

  constructor(
    private readonly settings: BudgetSettings,
    private readonly lookups: BudgetLookups,
  ) {}

  /** True when any budget is set; otherwise the turn reads no usage at all. */
  get enabled(): boolean {
    return (
      this.settings.per_user > 0 ||
      Object.values(this.settings.users).some((tokens) => tokens > 0) ||
      Object.values(this.settings.workflows).some((tokens) => tokens > 0)
    );
  }

  /** What to read with the turn's conversation (undefined: no budget is set). */
  async usageQuery(turnId: string, now = new Date()): Promise<UsageQuery | undefined> {
    if (!this.enabled) return undefined;
    const ids = await Promise.all(Object.keys(this.settings.workflows).map((name) => this.lookups.workflowIdByName(name)));
    return { day: usageDay(now), turnId, workflowIds: ids.filter((id): id is string => id !== null) };
  }

  /**
   * Throws BUDGET_EXCEEDED when the sender (a user id or `<channel>:<contact>`) or the workflow the
   * turn routed to has used its budget today.
   */
  async check(sender: string, workflow: { id: string; name: string } | null, usage: UsageToday): Promise<void> {
    const userLimit = await this.userLimit(sender);
    if (userLimit > 0 && usage.user >= userLimit) {
      throw new BudgetExceeded(
        'user',
        `You have used your daily token budget (${tokens(userLimit)}; ${format(usage.user)} spent today). It starts again at 00:00 UTC.`,
      );
    }
    const workflowLimit = workflow ? (this.settings.workflows[workflow.name] ?? 0) : 0;
    const spent = workflow ? (usage.workflows[workflow.id] ?? 0) : 0;
    if (workflow && workflowLimit > 0 && spent >= workflowLimit) {
      throw new BudgetExceeded(
        'workflow',
        `The workflow "${workflow.name}" has used its daily token budget (${tokens(workflowLimit)}). It starts again at 00:00 UTC.`,
      );
    }
  }

  /** The sender's budget: by key (user id or contact), else by username, else the per-user default. */
  private async userLimit(sender: string): Promise<number> {
    const byKey = this.settings.users[sender];
    if (byKey !== undefined) return byKey;
    if (Object.keys(this.settings.users).length > 0) {
      if (!this.usernames.has(sender)) this.usernames.set(sender, await this.lookups.usernameOf(sender));
      const username = this.usernames.get(sender);
      if (username && this.settings.users[username] !== undefined) return this.settings.users[username]!;
    }
    return this.settings.per_user;
  }
}

/** A turn refused over a daily budget: its message is shown to the person in their channel. */
export class BudgetExceeded extends AppError {
  constructor(
    readonly scope: 'user' | 'workflow',
    message: string,
  ) {
    super('BUDGET_EXCEEDED', message);
  }
}

function format(count: number): string {
  return count.toLocaleString('en-US');
}

function tokens(count: number): string {
  return `${format(count)} ${count === 1 ? 'token' : 'tokens'}`;
}
