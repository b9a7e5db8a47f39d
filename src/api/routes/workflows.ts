import { NO_AUDIT, type AuditSink } from '../../core/audit';
import { userActor } from '../../core/actor';
import type { Principal } from '../../core/principal';
import { z } from 'zod';
import { BINDING_CHANNEL, SESSION_KEY } from '../../core/channel';
import { BINDING_CHANNEL_HINT, WORKFLOW_NAME, triggersSchema, workflowInputSchema, workflowPatchSchema, workflowSchema } from '../../workflows/workflow-schema';
import { type SyncResult, type WorkflowService } from '../../workflows/workflow-service';
import { workflowView } from '../../workflows/workflow-view';
import { syncWarnings, warningsFor, workflowWarningSchema } from '../../workflows/workflow-warnings';
import type { ApiRouter } from '../endpoint';
import { listPage } from '../schemas/envelope';
import { listQuery } from '../schemas/sessions';

const tags = ['workflows'];
const nameParams = z.object({ name: z.string().regex(WORKFLOW_NAME, 'a workflow name') });
const channelParams = z.object({ channel: z.string().regex(BINDING_CHANNEL, BINDING_CHANNEL_HINT) });
const bindingSchema = z.object({ channel: z.string(), workflows: z.array(z.string()) }).meta({ id: 'BindingChannel' });
const contactSchema = z
  .object({
    session_key: z.string(),
    display_name: z.string().nullable(),
    tags: z.array(z.string()),
    workflow: z.string().nullable().describe('The workflow this contact always gets, by name.'),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .meta({ id: 'Contact' });
const fieldIssues = z.record(z.string(), z.array(z.object({ code: z.string(), message: z.string() })));
const syncResultSchema = z
  .object({
    created: z.array(z.string()),
    updated: z.array(z.object({ name: z.string(), fields: z.array(z.string()) })),
    unchanged: z.array(z.string()),
    deleted: z.array(z.string()),
    errors: z.array(z.object({ name: z.string().nullable(), index: z.number().int(), code: z.string(), message: z.string(), fields: fieldIssues })),
    dry_run: z.boolean(),
    warnings: z.array(workflowWarningSchema).describe('About the workflows it accepted: one the router can never pick, a default with no effect.'),
  })
  .meta({ id: 'WorkflowSyncResult' });
/** A written workflow, with what is saved but will not work as likely meant. */
const writtenSchema = workflowSchema
  .extend({ warnings: z.array(workflowWarningSchema).describe('A workflow the router can never pick, a default with no effect; empty when all is well.') })
  .meta({ id: 'WrittenWorkflow' });

const SYNC_DESCRIPTION =
  'Creates and updates the given workflows; with `prune`, deletes the ones not given; with `dry_run`, only reports. Refused entries are listed in `errors` and left as they are.';
const PATCH_DESCRIPTION =
  'JSON merge-patch (RFC 7396) semantics: fields left out keep their value; nested `triggers` merge member by member ' +
  '(`{"triggers": {"keywords": [...]}}` keeps `regex`, `contact_tags` and `min_score`), and `null` removes a member.';

/** Workflows, their channel bindings and contacts (decisions.md §4). Reads: any user; writes: admins. */
export function registerWorkflowRoutes(api: ApiRouter, workflows: WorkflowService, audit: AuditSink = NO_AUDIT): void {
  const changed = (principal: Principal, name: string, action: string) =>
    audit.record({ kind: 'workflow.changed', actor: userActor(principal), subject: name, action });
  api.add({
    method: 'post',
    path: '/assistant/workflows',
    summary: 'Create a workflow',
    tags,
    access: 'admin',
    body: workflowInputSchema,
    errors: ['CONFLICT', 'SYSTEM_PROMPT_TOO_LONG'],
    response: { status: 201, description: 'The new workflow, with `warnings`.', data: writtenSchema },
    handler: async ({ principal, body }) => {
      const created = await workflows.create(body);
      changed(principal, created.name, 'created');
      return withWarnings(workflows, created);
    },
  });

  api.add({
    method: 'get',
    path: '/assistant/workflows',
    summary: 'List workflows, oldest first',
    tags,
    access: 'user',
    query: listQuery,
    response: { status: 200, description: 'A page of workflows.', data: listPage(workflowSchema) },
    handler: ({ query }) => workflows.list(query),
  });

  api.add({
    method: 'post',
    path: '/assistant/workflows/sync',
    summary: 'Make the stored workflows match a set (what `switchboard workflows sync` calls)',
    description: SYNC_DESCRIPTION,
    tags,
    access: 'admin',
    body: z.strictObject({ workflows: z.array(z.unknown()).max(1_000), prune: z.boolean().default(false), dry_run: z.boolean().default(false) }),
    response: { status: 200, description: 'What was (or would be) created, updated, unchanged, deleted and refused.', data: syncResultSchema },
    handler: async ({ principal, body }) => {
      const result = await syncWithWarnings(workflows, body.workflows, { prune: body.prune, dryRun: body.dry_run });
      if (!body.dry_run) {
        audit.record({
          kind: 'workflow.synced',
          actor: userActor(principal),
          subject: null,
          action: body.prune ? 'sync+prune' : 'sync',
          details: syncDetails(result),
        });
      }
      return result;
    },
  });

  api.add({
    method: 'get',
    path: '/assistant/workflows/{name}',
    summary: 'Get a workflow',
    tags,
    access: 'user',
    params: nameParams,
    errors: ['WORKFLOW_NOT_FOUND'],
    response: { status: 200, description: 'The workflow.', data: workflowSchema },
    handler: async ({ params }) => workflowView(await workflows.find(params.name)),
  });

  api.add({
    method: 'put',
    path: '/assistant/workflows/{name}',
    summary: 'Replace a workflow',
    tags,
    access: 'admin',
    params: nameParams,
    body: workflowInputSchema,
    errors: ['WORKFLOW_NOT_FOUND', 'SYSTEM_PROMPT_TOO_LONG'],
    response: { status: 200, description: 'The workflow, with `warnings`.', data: writtenSchema },
    handler: async ({ principal, params, body }) => {
      const replaced = await workflows.replace(params.name, body);
      changed(principal, params.name, 'replaced');
      return withWarnings(workflows, replaced);
    },
  });

  api.add({
    method: 'patch',
    path: '/assistant/workflows/{name}',
    summary: 'Change some fields of a workflow',
    description: PATCH_DESCRIPTION,
    tags,
    access: 'admin',
    params: nameParams,
    body: workflowPatchSchema,
    errors: ['WORKFLOW_NOT_FOUND', 'SYSTEM_PROMPT_TOO_LONG'],
    response: { status: 200, description: 'The workflow, with `warnings`.', data: writtenSchema },
    handler: async ({ principal, params, body }) => {
      const patched = await workflows.patch(params.name, body);
      changed(principal, params.name, 'changed');
      return withWarnings(workflows, patched);
    },
  });

  api.add({
    method: 'delete',
    path: '/assistant/workflows/{name}',
    summary: 'Delete a workflow (sessions and contacts bound to it fall back to routing)',
    tags,
    access: 'admin',
    params: nameParams,
    errors: ['WORKFLOW_NOT_FOUND'],
    response: { status: 204, description: 'Deleted.' },
    handler: async ({ principal, params, res }) => {
      await workflows.delete(params.name);
      changed(principal, params.name, 'deleted');
      res.status(204).end();
    },
    raw: true,
  });

  api.add({
    method: 'get',
    path: '/assistant/binding-channels',
    summary: 'Each channel with the workflows bound to it (a plain array)',
    tags,
    access: 'user',
    response: { status: 200, description: 'Channels and workflows.', data: z.array(bindingSchema) },
    handler: () => workflows.bindingChannels(),
  });

  api.add({
    method: 'get',
    path: '/assistant/binding-channels/{channel}',
    summary: 'The workflows bound to one channel',
    tags,
    access: 'user',
    params: channelParams,
    response: { status: 200, description: 'The channel and its workflows.', data: bindingSchema },
    handler: async ({ params }) =>
      (await workflows.bindingChannels()).find((entry) => entry.channel === params.channel) ?? { channel: params.channel, workflows: [] },
  });

  api.add({
    method: 'put',
    path: '/assistant/binding-channels/{channel}',
    summary: "Bind exactly these workflows to a channel (edits the workflows' binding_channels)",
    tags,
    access: 'admin',
    params: channelParams,
    body: z.strictObject({ workflows: z.array(z.string().regex(WORKFLOW_NAME)).max(500) }),
    response: { status: 200, description: 'The channel and its workflows.', data: bindingSchema },
    handler: async ({ principal, params, body }) => {
      const bound = await workflows.setBinding(params.channel, body.workflows);
      changed(principal, params.channel, `binding:${body.workflows.join(',')}`.slice(0, 64));
      return bound;
    },
  });

  api.add({
    method: 'get',
    path: '/assistant/contacts',
    summary: 'Contacts of the chat channels (tags, bound workflow)',
    tags,
    access: 'admin',
    query: listQuery,
    response: { status: 200, description: 'A page of contacts.', data: listPage(contactSchema) },
    handler: ({ query }) => workflows.contacts.list(query),
  });

  api.add({
    method: 'put',
    path: '/assistant/contacts/{session_key}',
    summary: 'Create or change a contact: display name, tags, and a workflow it always gets',
    tags,
    access: 'admin',
    params: z.object({ session_key: z.string().regex(SESSION_KEY, '`<channel>::<conversation>`') }),
    body: z.strictObject({
      display_name: z.string().max(200).nullable().optional(),
      tags: triggersSchema.shape.contact_tags.optional(),
      workflow: z.string().regex(WORKFLOW_NAME).nullable().optional(),
    }),
    errors: ['WORKFLOW_NOT_FOUND'],
    response: { status: 200, description: 'The contact.', data: contactSchema },
    handler: ({ params, body }) => workflows.contacts.upsert(params.session_key, body),
  });
}

/** A written workflow with the warnings about it among all the stored ones. */
async function withWarnings<T extends { name: string }>(workflows: WorkflowService, view: T) {
  return { ...view, warnings: warningsFor([view.name], await workflows.all()) };
}

/** A sync's answer with the warnings about the workflows it accepted (workflow-warnings.ts). */
async function syncWithWarnings(workflows: WorkflowService, inputs: readonly unknown[], options: { prune: boolean; dryRun: boolean }) {
  const before = await workflows.all();
  const synced = await workflows.sync(inputs, options);
  return { ...synced, warnings: syncWarnings(before, inputs, synced) };
}

/** What a sync did, by workflow name (names only: the contents are in the workflows themselves). */
function syncDetails(result: SyncResult): Record<string, unknown> {
  return {
    created: result.created,
    updated: result.updated.map((entry) => entry.name),
    unchanged: result.unchanged.length,
    deleted: result.deleted,
    errors: result.errors.length,
  };
}
