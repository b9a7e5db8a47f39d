import { UniqueConstraintError } from 'sequelize';
import { parseSessionKey, type ChannelScope } from '../core/channel';
import { AppError } from '../core/errors';
import type { ContactRow, Models, WorkflowRow } from '../db/models';

/** Contacts of the chat channels: a display name, tags for routing, and a workflow a person always gets. */
export class ContactService {
  constructor(
    private readonly models: Models,
    private readonly channels: readonly ChannelScope[],
    /** The workflow of a name, or WORKFLOW_NOT_FOUND. */
    private readonly findWorkflow: (name: string) => Promise<WorkflowRow>,
  ) {}

  async list(options: { cursor?: string; limit: number }) {
    const rows = await this.models.Contact.findAll({ order: [['session_key', 'ASC']] });
    const start = options.cursor ? rows.findIndex((row) => row.session_key > Buffer.from(options.cursor!, 'base64url').toString('utf8')) : 0;
    const page = rows.slice(start < 0 ? rows.length : start, (start < 0 ? rows.length : start) + options.limit);
    const hasMore = (start < 0 ? rows.length : start) + options.limit < rows.length;
    const views = await Promise.all(page.map((row) => this.contactView(row)));
    return { items: views, next_cursor: hasMore ? Buffer.from(page.at(-1)!.session_key).toString('base64url') : null, has_more: hasMore, total: rows.length };
  }

  async upsert(sessionKey: string, input: { display_name?: string | null; tags?: string[]; workflow?: string | null }) {
    const channel = parseSessionKey(sessionKey)?.channel;
    if (!this.channels.some((scope) => scope.name === channel)) {
      throw AppError.validation({
        'path.session_key': [
          {
            code: 'unknown_channel',
            message: `No channel "${channel}": a session key starts with one of ${this.channels.map((scope) => scope.name).join(', ')}, then "::".`,
          },
        ],
      });
    }
    const workflowId = input.workflow === undefined ? undefined : input.workflow === null ? null : (await this.findWorkflow(input.workflow)).id;
    try {
      return await this.writeContact(sessionKey, input, workflowId);
    } catch (error) {
      // A concurrent PUT created the contact first: ours becomes an update of it (the last write wins).
      if (!(error instanceof UniqueConstraintError)) throw error;
      return this.writeContact(sessionKey, input, workflowId);
    }
  }

  private async writeContact(sessionKey: string, input: { display_name?: string | null; tags?: string[] }, workflowId: string | null | undefined) {
    const row = await this.models.Contact.findOne({ where: { session_key: sessionKey } });
    if (row) {
      await row.update({
        ...(input.display_name !== undefined ? { display_name: input.display_name } : {}),
        ...(input.tags !== undefined ? { tags: input.tags } : {}),
        ...(workflowId !== undefined ? { workflow_id: workflowId } : {}),
      });
      return this.contactView(row);
    }
    const created = await this.models.Contact.create({
      session_key: sessionKey,
      display_name: input.display_name ?? null,
      tags: input.tags ?? [],
      workflow_id: workflowId ?? null,
    });
    return this.contactView(created);
  }

  private async contactView(row: ContactRow) {
    const workflow = row.workflow_id ? await this.models.Workflow.findOne({ where: { id: row.workflow_id } }) : null;
    return {
      session_key: row.session_key,
      display_name: row.display_name,
      tags: row.tags,
      workflow: workflow?.name ?? null,
      created_at: row.created_at.toISOString(),
      updated_at: row.updated_at.toISOString(),
    };
  }
}
