import type { Models, SessionRow, WorkflowRow } from '../db/models';
import { Router, type RouteDecision, type RouteInput, type TriggerScore } from './router';

/**
 * The router of a worker process, kept in step with the workflows table: one cheap query per turn
 * (count and latest change); triggers are recompiled only when that changed, on any process.
 */
export class RoutingService {
  private readonly router = new Router();
  private version = '';
  private rows = new Map<string, WorkflowRow>();

  constructor(private readonly models: Models) {}

  async route(session: SessionRow, text: string, requestedWorkflow: string | null): Promise<{ decision: RouteDecision; workflow: WorkflowRow | null }> {
    await this.refresh();
    const contact = session.session_key ? await this.models.Contact.findOne({ where: { session_key: session.session_key } }) : null;
    const decision = this.router.route({
      text,
      channel: routingChannel(session),
      requestedWorkflow,
      contact,
      sessionWorkflowId: session.active_workflow_id,
    });
    return { decision, workflow: decision.workflowId ? (this.rows.get(decision.workflowId) ?? null) : null };
  }

  /** What `route` would decide for this input, with every workflow's trigger score (the routing test box). */
  async explain(input: RouteInput): Promise<{ decision: RouteDecision; workflow: WorkflowRow | null; scores: TriggerScore[] }> {
    await this.refresh();
    const { decision, scores } = this.router.explain(input);
    return { decision, workflow: decision.workflowId ? (this.rows.get(decision.workflowId) ?? null) : null, scores };
  }

  async workflowById(id: string | null): Promise<WorkflowRow | null> {
    if (!id) return null;
    await this.refresh();
    return this.rows.get(id) ?? null;
  }

  private async refresh(): Promise<void> {
    const [count, latest] = await Promise.all([this.models.Workflow.count(), this.models.Workflow.max('updated_at')]);
    const version = `${count}:${latest instanceof Date ? latest.getTime() : String(latest)}`;
    if (version === this.version) return;
    const rows = await this.models.Workflow.findAll();
    this.router.load(rows);
    this.rows = new Map(rows.map((row) => [row.id, row]));
    this.version = version;
  }
}

/**
 * The channel a session's messages arrive on, as binding_channels name it: `web`, or `slack:<channel
 * id>` / `telegram:<chat id>` from the session key (`slack::<team>:<channel>:<thread>`,
 * `telegram::<chat>`; decisions.md §3).
 */
export function routingChannel(session: Pick<SessionRow, 'channel' | 'session_key'>): string {
  const key = session.session_key;
  if (!key) return session.channel;
  const [channel, conversation = ''] = key.split('::');
  if (channel === 'slack') {
    const parts = conversation.split(':');
    return parts[1] ? `slack:${parts[1]}` : 'slack';
  }
  if (channel === 'telegram') return conversation ? `telegram:${conversation}` : 'telegram';
  return channel ?? session.channel;
}
