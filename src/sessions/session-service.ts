import { randomUUID } from 'node:crypto';
import { Op, type WhereOptions } from 'sequelize';
import { WEB_CHANNEL } from '../core/channel';
import { AppError } from '../core/errors';
import { mergePatch } from '../core/merge-patch';
import { cursorOrThrow, keysetPage as page } from '../core/page-cursor';
import type { Principal } from '../core/principal';
import type { ControlBus, TurnRegistry } from '../core/turns';
import type { Models, SessionRow } from '../db/models';
import type { SessionRecord, TurnStore } from '../db/turn-store';
import type { WorkflowRow } from '../db/models';
import { toolNames } from '../workflows/workflow-schema';
import type { SessionAccess } from './session-access';
import { messageView, sessionView } from './serialize';

export interface ListOptions {
  cursor?: string;
  limit: number;
}

export interface SessionServiceDeps {
  models: Models;
  store: TurnStore;
  registry: TurnRegistry;
  access: SessionAccess;
  control: ControlBus;
  /** Tools loaded in a new session (`agent.default_tools`). */
  defaultTools: readonly string[];
  workflowById(id: string | null): Promise<WorkflowRow | null>;
  workflowByName(name: string): Promise<WorkflowRow | null>;
  /** The model aliases a session's `config.model` may name (GET /config/models). */
  modelAliases: readonly string[];
}

/**
 * A session's `config` (already shape-checked by the API schema): the keys the agent honours.
 * `null` means "unset" (decisions.md §8).
 */
export interface SessionConfigInput {
  model?: string | null;
  memory_mode?: string | null;
  system_prompt?: string | null;
  max_steps?: number | null;
  context_compression?: boolean | null;
}

/** The memory mode of a session whose config names none. */
const DEFAULT_MEMORY_MODE = 'conversation';

/** Sessions and their history, as their owner (or an admin) sees them. */
export class SessionService {
  constructor(private readonly deps: SessionServiceDeps) {}

  async create(principal: Principal, input: { name?: string; workflow?: string; config?: SessionConfigInput }) {
    const config = mergePatch<Record<string, unknown>>({}, input.config);
    this.checkConfig(config);
    const workflow = input.workflow === undefined ? null : await this.deps.workflowByName(input.workflow);
    if (input.workflow !== undefined && !workflow) {
      throw AppError.validation({ workflow: [{ code: 'unknown_workflow', message: `No workflow named "${input.workflow}".` }] });
    }
    const session = await this.deps.store.createSession({
      ...(typeof config.memory_mode === 'string' ? { memory_mode: config.memory_mode } : {}),
      id: randomUUID(),
      name: input.name ?? defaultName(new Date()),
      owner_id: principal.userId,
      channel: WEB_CHANNEL,
      session_key: null,
      active_workflow_id: workflow?.id ?? null,
      config,
      active_tools: [...this.deps.defaultTools],
      archived_at: null,
      tool_state: null,
    });
    return this.view(session, null);
  }

  async list(principal: Principal, options: ListOptions & { includeArchived: boolean }) {
    const { models, registry } = this.deps;
    const where: WhereOptions<SessionRow> = {};
    if (principal.role !== 'admin') Object.assign(where, { owner_id: principal.userId });
    if (!options.includeArchived) Object.assign(where, { archived_at: null });
    const total = await models.Session.count({ where });
    const before = options.cursor === undefined ? null : cursorOrThrow(options.cursor);
    const rows = await models.Session.findAll({
      where: before === null ? where : { ...where, ordinal: { [Op.lt]: before } },
      order: [['ordinal', 'DESC']],
      limit: options.limit + 1,
    });
    const live = await registry.getMany(rows.map((row) => row.id));
    const views = await Promise.all(rows.map(async (row) => ({ row, view: await this.view(row, live.get(row.id) ?? null) })));
    return page(views, options.limit, total);
  }

  /** Checks the caller may use the session, from a cache (no database read per message): 404 otherwise. */
  async access(principal: Principal, id: string): Promise<void> {
    const { archived } = await this.deps.access.check(principal, id);
    if (archived) throw new AppError('CONFLICT', 'The session is archived; restore it first.');
  }

  /** The session if the caller may see it; 404 SESSION_NOT_FOUND otherwise (not 403: no existence leak). */
  async visible(principal: Principal, id: string): Promise<SessionRow> {
    const row = await this.deps.models.Session.findOne({ where: { id } });
    if (!row || (principal.role !== 'admin' && row.owner_id !== principal.userId)) {
      throw new AppError('SESSION_NOT_FOUND', `No session ${id}.`);
    }
    return row;
  }

  async get(principal: Principal, id: string) {
    const row = await this.visible(principal, id);
    return this.view(row, await this.deps.registry.get(id));
  }

  async update(principal: Principal, id: string, input: { name?: string; config?: SessionConfigInput }) {
    const row = await this.visible(principal, id);
    if (input.config !== undefined) {
      const config = mergePatch(row.config ?? {}, input.config);
      this.checkConfig(input.config);
      row.config = config;
      if (input.config.memory_mode !== undefined) row.memory_mode = input.config.memory_mode ?? DEFAULT_MEMORY_MODE;
    }
    if (input.name !== undefined) row.name = input.name;
    await row.save();
    return this.view(row, await this.deps.registry.get(id));
  }

  async archive(principal: Principal, id: string) {
    const row = await this.visible(principal, id);
    await this.refuseWhileRunning(id, 'cancel it or wait for `done` first');
    row.archived_at ??= new Date();
    await row.save();
    await this.changed(id);
    return this.view(row, null);
  }

  async restore(principal: Principal, id: string) {
    const row = await this.visible(principal, id);
    row.archived_at = null;
    await row.save();
    await this.changed(id);
    return this.view(row, await this.deps.registry.get(id));
  }

  /** Deletes a session for good, with its messages (owner or admin). Refused while a turn runs. */
  async deletePermanently(principal: Principal, id: string): Promise<void> {
    const { models } = this.deps;
    const row = await this.visible(principal, id);
    await this.refuseWhileRunning(id, 'cancel it or wait for `done` first');
    await models.Session.sequelize!.transaction(async (transaction) => {
      await models.Message.destroy({ where: { session_id: id }, transaction });
      await models.ToolRun.destroy({ where: { session_id: id }, transaction });
      await models.InboundEvent.destroy({ where: { session_id: id }, transaction });
      await row.destroy({ transaction });
    });
    await this.changed(id);
  }

  async history(principal: Principal, id: string, options: ListOptions) {
    const session = await this.visible(principal, id);
    // A user message after the last one a turn answered is owed: running, or queued behind the running turn.
    const answeredThrough = session.answered_through ?? 0;
    const status = (row: { role: string; ordinal: number }): 'answered' | 'waiting' | null =>
      row.role !== 'user' ? null : row.ordinal > answeredThrough ? 'waiting' : 'answered';
    const { models } = this.deps;
    const where = { session_id: id };
    const total = await models.Message.count({ where });
    const after = options.cursor === undefined ? null : cursorOrThrow(options.cursor);
    const rows = await models.Message.findAll({
      where: after === null ? where : { ...where, ordinal: { [Op.gt]: after } },
      order: [['ordinal', 'ASC']],
      limit: options.limit + 1,
    });
    // A user message answers to the workflow its reply names (routing happens when the turn runs).
    const replies = await models.Message.findAll({
      where: { reply_to: { [Op.in]: rows.filter((row) => row.role === 'user').map((row) => row.id) } },
      attributes: ['reply_to', 'workflow_id'],
    });
    const workflowOf = new Map(replies.map((reply) => [reply.reply_to!, reply.workflow_id]));
    return page(
      rows.map((row) => ({ row, view: { ...messageView(row), workflow_id: row.workflow_id ?? workflowOf.get(row.id) ?? null, status: status(row) } })),
      options.limit,
      total,
    );
  }

  /** One stored message of a session (already access-checked), as history shows it; null when gone. */
  async message(sessionId: string, messageId: string) {
    const row = await this.deps.models.Message.findOne({ where: { id: messageId, session_id: sessionId } });
    return row ? messageView(row) : null;
  }

  /** Deletes the history, keeping the newest `keepLast` messages. Refused while a turn runs. */
  async clear(principal: Principal, id: string, keepLast: number) {
    await this.visible(principal, id);
    await this.refuseWhileRunning(id, 'wait for `done` first');
    const { models } = this.deps;
    const kept = await models.Message.findAll({
      where: { session_id: id },
      order: [['ordinal', 'DESC']],
      limit: keepLast,
      attributes: ['ordinal'],
    });
    const oldestKept = kept.at(-1)?.ordinal;
    const deleted = await models.Message.destroy({
      where: oldestKept === undefined ? { session_id: id } : { session_id: id, ordinal: { [Op.lt]: oldestKept } },
    });
    return { deleted, kept: kept.length };
  }

  /** `config.model` must name a configured model: accepted and ignored would be a lie. */
  private checkConfig(config: SessionConfigInput | undefined): void {
    if (typeof config?.model === 'string' && !this.deps.modelAliases.includes(config.model)) {
      throw AppError.validation({
        'config.model': [
          {
            code: 'unknown_model',
            message: `No model "${config.model}" is configured; GET /api/v1/config/models lists them (${this.deps.modelAliases.join(', ')}).`,
          },
        ],
      });
    }
  }

  /** TURN_IN_PROGRESS while the session has a running turn (on any process). */
  async refuseWhileRunning(id: string, advice: string): Promise<void> {
    if (await this.deps.registry.get(id)) throw new AppError('TURN_IN_PROGRESS', `A turn is running; ${advice}.`);
  }

  /** The session's active workflow, which pins the session's tool list (spec rule 2); null without one. */
  async pinningWorkflow(session: Pick<SessionRecord, 'active_workflow_id'>): Promise<{ name: string; tools: string[] } | null> {
    const workflow = await this.deps.workflowById(session.active_workflow_id);
    return workflow ? { name: workflow.name, tools: toolNames(workflow.tool_list) } : null;
  }

  private async view(row: Omit<SessionRecord, 'answered_through' | 'ordinal'>, live: Parameters<typeof sessionView>[1]) {
    const workflow = await this.deps.workflowById(row.active_workflow_id);
    return sessionView(row, live, workflow ? toolNames(workflow.tool_list) : undefined);
  }

  private async changed(sessionId: string): Promise<void> {
    await this.deps.control.publish({ kind: 'session_changed', sessionId });
  }
}

/** `Session YYYY-MM-DD HH:MM` (UTC), the default name of decisions.md §3. */
function defaultName(now: Date): string {
  return `Session ${now.toISOString().slice(0, 16).replace('T', ' ')}`;
}
