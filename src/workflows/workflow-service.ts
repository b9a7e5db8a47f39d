import { randomUUID } from 'node:crypto';
import { Op, UniqueConstraintError } from 'sequelize';
import { ContactService } from './contact-service';
import type { ToolCatalog } from '../agent/tool-box';
import { countTokens } from '../agent/tokens';
import { regexCostProblems } from './regex-safety';
import { describeBindings, isKnownBinding, type ChannelScope } from '../core/channel';
import { AppError, type FieldIssues } from '../core/errors';
import type { Models, WorkflowRow } from '../db/models';
import { decodeCursor, encodeCursor } from '../core/page-cursor';
import { mergePatch } from '../core/merge-patch';
import { workflowView, type WorkflowView } from './workflow-view';
import { canonical, issuesOf } from './workflow-compare';
import { unknownDeliverIssues } from './events-schema';
import { toolNames, workflowInputSchema, type WorkflowInput, type WorkflowPatch } from './workflow-schema';

/** Finds knowledge collections by id or name (the knowledge module implements it). */
export interface KnowledgeCollections {
  /** The ids of the given collection ids or names, and which of them do not exist. */
  resolve(idsOrNames: readonly string[]): Promise<{ ids: string[]; missing: string[] }>;
}

export interface WorkflowServiceOptions {
  tools: ToolCatalog;
  collections: KnowledgeCollections;
  /** Tokens a system prompt may use: the context window minus the working-memory budget (spec rule 3). */
  promptBudgetTokens: number;
  /** Called after every change, so routers in every process reload (they never poll per turn). */
  onChange?: () => Promise<void>;
  /** The registry's channels: which `binding_channels` values and session keys exist. */
  channels: readonly ChannelScope[];
}

/** The fields compared by sync; a change in any of them is an update. */
const FIELDS = [
  'description',
  'system_prompt',
  'tool_list',
  'knowledge_base_ids',
  'triggers',
  'binding_channels',
  'default',
  'mid_turn',
  'approvals',
  'events',
] as const;
type Field = (typeof FIELDS)[number];

export interface SyncResult {
  created: string[];
  updated: { name: string; fields: Field[] }[];
  unchanged: string[];
  deleted: string[];
  errors: { name: string | null; index: number; code: string; message: string; fields: FieldIssues }[];
  dry_run: boolean;
}

/** Workflows and their channel bindings (and, through `contacts`, contacts): validated writes, one place for every rule. */
export class WorkflowService {
  /** Contacts of the chat channels: the binding of a person to a workflow (the router's second rule). */
  readonly contacts: ContactService;

  constructor(
    private readonly models: Models,
    private readonly options: WorkflowServiceOptions,
  ) {
    this.contacts = new ContactService(models, options.channels, (name) => this.find(name));
  }

  async list(options: { cursor?: string; limit: number }) {
    const total = await this.models.Workflow.count();
    const after = options.cursor === undefined ? null : decodeCursor(options.cursor);
    if (options.cursor !== undefined && after === null) {
      throw AppError.validation({ 'query.cursor': [{ code: 'invalid_cursor', message: 'Not a cursor from this list.' }] });
    }
    const rows = await this.models.Workflow.findAll({
      where: after === null ? {} : { ordinal: { [Op.gt]: after } },
      order: [['ordinal', 'ASC']],
      limit: options.limit + 1,
    });
    const hasMore = rows.length > options.limit;
    const items = rows.slice(0, options.limit);
    return { items: items.map(workflowView), next_cursor: hasMore ? encodeCursor(items.at(-1)!.ordinal) : null, has_more: hasMore, total };
  }

  async all(): Promise<WorkflowRow[]> {
    return this.models.Workflow.findAll({ order: [['name', 'ASC']] });
  }

  async find(name: string): Promise<WorkflowRow> {
    const row = await this.models.Workflow.findOne({ where: { name } });
    if (!row) throw new AppError('WORKFLOW_NOT_FOUND', `No workflow named "${name}".`);
    return row;
  }

  async create(input: WorkflowInput): Promise<WorkflowView> {
    await this.check(input);
    const exists = () => new AppError('CONFLICT', `A workflow named "${input.name}" exists already.`);
    if (await this.models.Workflow.findOne({ where: { name: input.name } })) throw exists();
    let row: WorkflowRow;
    try {
      row = await this.models.Workflow.create({ id: randomUUID(), ...input });
    } catch (error) {
      // Another request created the same name between the check and the insert: the unique index decided.
      if (error instanceof UniqueConstraintError) throw exists();
      throw error;
    }
    await this.changed();
    return workflowView(row);
  }

  async replace(name: string, input: WorkflowInput): Promise<WorkflowView> {
    if (input.name !== name) throw AppError.validation({ name: [{ code: 'name_mismatch', message: 'The body names another workflow than the path.' }] });
    const row = await this.find(name);
    await this.check(input);
    await row.update(input);
    await this.changed();
    return workflowView(row);
  }

  async patch(name: string, patch: WorkflowPatch): Promise<WorkflowView> {
    const row = await this.find(name);
    const stored = workflowView(row);
    const triggers = patch.triggers === undefined ? stored.triggers : mergePatch(stored.triggers, patch.triggers);
    // The merged triggers are checked whole here (a patch's members alone could not be).
    const parsed = workflowInputSchema.safeParse({ ...pick(stored), ...patch, triggers, name });
    if (!parsed.success) throw AppError.validation(issuesOf(parsed.error.issues));
    const merged = parsed.data;
    await this.check(merged);
    await row.update(merged);
    await this.changed();
    return workflowView(row);
  }

  async delete(name: string): Promise<void> {
    const row = await this.find(name);
    await this.models.Contact.update({ workflow_id: null }, { where: { workflow_id: row.id } });
    await this.models.Session.update({ active_workflow_id: null }, { where: { active_workflow_id: row.id } });
    await row.destroy();
    await this.changed();
  }

  /**
   * Makes the stored workflows look like `inputs`: creates, updates, (with `prune`) deletes the ones
   * not named. Refused entries are reported and left as they are; the rest is applied together.
   * Idempotent: the same inputs twice change nothing the second time.
   */
  async sync(inputs: readonly unknown[], options: { prune: boolean; dryRun: boolean }): Promise<SyncResult> {
    const result: SyncResult = { created: [], updated: [], unchanged: [], deleted: [], errors: [], dry_run: options.dryRun };
    const existing = new Map((await this.models.Workflow.findAll()).map((row) => [row.name, row]));
    const named = new Set<string>();
    const writes: (() => Promise<unknown>)[] = [];
    for (const [index, raw] of inputs.entries()) {
      const rawName = typeof raw === 'object' && raw !== null && typeof (raw as { name?: unknown }).name === 'string' ? (raw as { name: string }).name : null;
      if (rawName && named.has(rawName)) {
        result.errors.push({
          name: rawName,
          index,
          code: 'CONFLICT',
          message: `"${rawName}" is given more than once.`,
          fields: { name: [{ code: 'duplicate', message: 'Named twice in one sync.' }] },
        });
        continue;
      }
      if (rawName) named.add(rawName);
      const parsed = workflowInputSchema.safeParse(raw);
      if (!parsed.success) {
        result.errors.push({ name: rawName, index, code: 'VALIDATION_ERROR', message: 'The workflow is not valid.', fields: issuesOf(parsed.error.issues) });
        continue;
      }
      const input = parsed.data;
      try {
        await this.check(input);
      } catch (error) {
        const known = AppError.from(error);
        result.errors.push({ name: input.name, index, code: known.code, message: known.message, fields: (known.details.fields as FieldIssues) ?? {} });
        continue;
      }
      const current = existing.get(input.name);
      if (!current) {
        result.created.push(input.name);
        writes.push(() => this.models.Workflow.create({ id: randomUUID(), ...input }));
        continue;
      }
      const changed = FIELDS.filter((field) => JSON.stringify(canonical(input[field])) !== JSON.stringify(canonical(workflowView(current)[field])));
      if (changed.length === 0) result.unchanged.push(input.name);
      else {
        result.updated.push({ name: input.name, fields: changed });
        writes.push(() => current.update(input));
      }
    }
    if (options.prune) {
      for (const [name, row] of existing) {
        if (named.has(name)) continue;
        result.deleted.push(name);
        writes.push(async () => {
          await this.models.Contact.update({ workflow_id: null }, { where: { workflow_id: row.id } });
          await this.models.Session.update({ active_workflow_id: null }, { where: { active_workflow_id: row.id } });
          await row.destroy();
        });
      }
    }
    if (!options.dryRun && writes.length > 0) {
      for (const write of writes) await write();
      await this.changed();
    }
    return result;
  }

  /** Each channel (every channel of the registry always) with the workflows bound to it. */
  async bindingChannels(): Promise<{ channel: string; workflows: string[] }[]> {
    const rows = await this.all();
    const channels = new Set([...this.options.channels.map((channel) => channel.name), ...rows.flatMap((row) => row.binding_channels)]);
    return [...channels].sort().map((channel) => ({ channel, workflows: rows.filter((row) => row.binding_channels.includes(channel)).map((row) => row.name) }));
  }

  /** Binds exactly `names` to `channel` (the same data as each workflow's `binding_channels`). */
  async setBinding(channel: string, names: readonly string[]): Promise<{ channel: string; workflows: string[] }> {
    if (!isKnownBinding(channel, this.options.channels)) throw AppError.validation({ 'path.channel': [this.unknownChannel(channel)] });
    const rows = await this.all();
    const missing = names.filter((name) => !rows.some((row) => row.name === name));
    if (missing.length > 0)
      throw AppError.validation({ workflows: [{ code: 'unknown_workflow', message: `No workflow named ${missing.map((m) => `"${m}"`).join(', ')}.` }] });
    for (const row of rows) {
      const bound = row.binding_channels.includes(channel);
      const wanted = names.includes(row.name);
      if (bound === wanted) continue;
      await row.update({ binding_channels: wanted ? [...row.binding_channels, channel] : row.binding_channels.filter((value) => value !== channel) });
    }
    await this.changed();
    return { channel, workflows: [...names].sort() };
  }

  private unknownChannel(value: string) {
    return { code: 'unknown_channel', message: `No such channel: ${value}; bind ${describeBindings(this.options.channels)}.` };
  }

  private async changed(): Promise<void> {
    await this.options.onChange?.();
  }

  /** The rules zod cannot check: tools, collections and channels exist, the system prompt fits (spec rules 2–4). */
  private async check(input: WorkflowInput): Promise<void> {
    const fields: FieldIssues = {};
    // The cost probe runs in a worker thread: saving a workflow never blocks the event loop.
    (await regexCostProblems(input.triggers.regex)).forEach((problem, index) => {
      if (problem) fields[`triggers.regex.${index}`] = [{ code: 'unsafe_regex', message: `Refused: ${problem}.` }];
    });
    if (Object.keys(fields).length > 0) throw AppError.validation(fields, 'A trigger regex is too costly to run on every message.');
    const unknownTools = toolNames(input.tool_list).filter((name) => !this.options.tools.get(name) && !this.options.tools.acceptsPin?.(name));
    if (unknownTools.length > 0) fields.tool_list = [{ code: 'unknown_tool', message: `No such tool: ${unknownTools.join(', ')}.` }];
    const { missing } = await this.options.collections.resolve(input.knowledge_base_ids);
    if (missing.length > 0) fields.knowledge_base_ids = [{ code: 'unknown_collection', message: `No such knowledge collection: ${missing.join(', ')}.` }];
    input.binding_channels.forEach((value, index) => {
      if (!isKnownBinding(value, this.options.channels)) fields[`binding_channels.${index}`] = [this.unknownChannel(value)];
    });
    Object.assign(fields, unknownDeliverIssues(input.events, this.options.channels));
    if (Object.keys(fields).length > 0) throw AppError.validation(fields, 'The workflow refers to things that do not exist.');
    const tokens = countTokens(input.system_prompt);
    if (tokens > this.options.promptBudgetTokens) {
      throw new AppError(
        'SYSTEM_PROMPT_TOO_LONG',
        `The system prompt uses ${tokens} tokens; at most ${this.options.promptBudgetTokens} fit (context window minus the working-memory budget).`,
        {
          details: {
            fields: { system_prompt: [{ code: 'too_long', message: `${tokens} tokens, at most ${this.options.promptBudgetTokens}` }] },
            tokens,
            limit: this.options.promptBudgetTokens,
          },
        },
      );
    }
  }
}

function pick(view: WorkflowView) {
  return Object.fromEntries(FIELDS.map((field) => [field, view[field]]));
}
