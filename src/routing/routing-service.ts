import { routingChannelOf, type ChannelScope } from '../core/channel';
import type { ControlBus, Unsubscribe } from '../core/turns';
import type { Models, WorkflowRow } from '../db/models';
import { Router, type RouteDecision, type RouteInput, type TriggerScore } from './router';

export const ROUTING_SERVICE_DEFAULTS = {
  /**
   * Workflow changes arrive as `workflows_changed` control messages (any process). This check of the
   * table's version (count, latest change) is only the safety net for a message lost in a Redis
   * outage: it runs in the background, never on a turn.
   */
  versionCheckMs: 30_000,
};

/** The session fields routing reads. */
export interface RoutedSession {
  channel: string;
  session_key: string | null;
  active_workflow_id: string | null;
}

/**
 * The router of a process, kept in step with the workflows table: loaded once, reloaded when a
 * workflow changes (told over the control bus). Routing a turn reads nothing from the database
 * except, for a chat session, its contact.
 */
export class RoutingService {
  private readonly router = new Router();
  private rows = new Map<string, WorkflowRow>();
  private names = new Map<string, WorkflowRow>();
  private version = '';
  private loaded: Promise<void> | null = null;
  private stopListening: Unsubscribe | null = null;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly models: Models,
    /** The registry's channels: how a session's key maps to the binding channel it routes as. */
    readonly channels: readonly ChannelScope[],
    private readonly limits = ROUTING_SERVICE_DEFAULTS,
  ) {}

  /** Follows workflow changes from every process. */
  async start(control: ControlBus): Promise<void> {
    this.stopListening = await control.subscribe((message) => {
      if (message.kind === 'workflows_changed') this.loaded = null;
    });
    this.timer = setInterval(() => void this.checkVersion().catch(() => undefined), this.limits.versionCheckMs);
    this.timer.unref();
    await this.ensureLoaded();
  }

  stop(): void {
    this.stopListening?.();
    if (this.timer) clearInterval(this.timer);
  }

  async route(session: RoutedSession, text: string, requestedWorkflow: string | null): Promise<{ decision: RouteDecision; workflow: WorkflowRow | null }> {
    await this.ensureLoaded();
    const contact = session.session_key ? await this.models.Contact.findOne({ where: { session_key: session.session_key } }) : null;
    const decision = this.router.route({
      text,
      // `web`, or the narrower `slack:<channel id>` / `telegram:<chat id>` its channel reads from the key.
      channel: routingChannelOf(session, this.channels),
      requestedWorkflow,
      contact,
      sessionWorkflowId: session.active_workflow_id,
    });
    return { decision, workflow: decision.workflowId ? (this.rows.get(decision.workflowId) ?? null) : null };
  }

  /** What `route` would decide for this input, with every workflow's trigger score (the routing test box). */
  async explain(input: RouteInput): Promise<{ decision: RouteDecision; workflow: WorkflowRow | null; scores: TriggerScore[] }> {
    await this.ensureLoaded();
    const { decision, scores } = this.router.explain(input);
    return { decision, workflow: decision.workflowId ? (this.rows.get(decision.workflowId) ?? null) : null, scores };
  }

  async workflowById(id: string | null): Promise<WorkflowRow | null> {
    if (!id) return null;
    await this.ensureLoaded();
    return this.rows.get(id) ?? null;
  }

  async hasWorkflow(name: string): Promise<boolean> {
    return (await this.workflowByName(name)) !== null;
  }

  async workflowByName(name: string): Promise<WorkflowRow | null> {
    await this.ensureLoaded();
    return this.names.get(name) ?? null;
  }

  /** The id of the workflow of that name, or null (daily budgets name their workflows). */
  async workflowIdByName(name: string): Promise<string | null> {
    return (await this.workflowByName(name))?.id ?? null;
  }

  private ensureLoaded(): Promise<void> {
    const loading = (this.loaded ??= this.reload());
    // A failed load is retried by the next caller.
    loading.catch(() => {
      if (this.loaded === loading) this.loaded = null;
    });
    return loading;
  }

  private async reload(): Promise<void> {
    const [rows, version] = await Promise.all([this.models.Workflow.findAll(), this.readVersion()]);
    this.router.load(rows);
    this.rows = new Map(rows.map((row) => [row.id, row]));
    this.names = new Map(rows.map((row) => [row.name, row]));
    this.version = version;
  }

  private async checkVersion(): Promise<void> {
    if ((await this.readVersion()) !== this.version) this.loaded = null;
  }

  private async readVersion(): Promise<string> {
    const [count, latest] = await Promise.all([this.models.Workflow.count(), this.models.Workflow.max('updated_at')]);
    return `${count}:${latest instanceof Date ? latest.getTime() : String(latest)}`;
  }
}
