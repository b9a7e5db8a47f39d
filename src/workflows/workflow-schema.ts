import { z } from 'zod';
import { BINDING_CHANNEL, describeBindings, isKnownBinding, type ChannelScope } from '../core/channel';
import { MID_TURN_POLICIES } from '../core/turns';
import { regexProblem } from './regex-safety';
import { approvalPoliciesSchema, approvalPolicySchema } from '../approvals/policy-schema';
import { eventsSchema } from './events-schema';
import { WORKFLOW_NAME } from './workflow-name';

export { WORKFLOW_NAME };

/** A binding channel's shape; which channels exist is the registry's (WorkflowService checks it). */
export const BINDING_CHANNEL_HINT = '`<channel>`, or `<channel>:<id>` for one conversation of it';

/** A binding channel of one of `channels` (the registry's), for request schemas built at startup. */
export function bindingChannelSchema(channels: readonly ChannelScope[]) {
  return z
    .string()
    .regex(BINDING_CHANNEL, BINDING_CHANNEL_HINT)
    .refine((value) => isKnownBinding(value, channels), { message: `No such channel; one of ${describeBindings(channels)}` });
}

export const triggersSchema = z
  .strictObject({
    keywords: z.array(z.string().trim().min(1).max(100)).max(200).default([]),
    regex: z
      .array(
        z.string().superRefine((pattern, context) => {
          const problem = regexProblem(pattern);
          if (problem) context.addIssue({ code: 'custom', message: `Refused: ${problem}.`, params: { code: 'unsafe_regex' } });
        }),
      )
      .max(50)
      .default([]),
    contact_tags: z.array(z.string().trim().min(1).max(64)).max(100).default([]),
    min_score: z.number().min(0).max(1000).optional(),
  })
  .meta({ id: 'WorkflowTriggers' });

/** The fields a client (or a YAML file) gives: exactly the spec's, plus `description`. */
export const workflowFields = {
  name: z.string().regex(WORKFLOW_NAME, 'a slug: lowercase letters, digits, "_" or "-", at most 64'),
  description: z.string().max(2_000).default(''),
  system_prompt: z.string().max(200_000).default(''),
  tool_list: z.string().max(2_000).default('').describe('Comma-separated tool names pinned in this workflow.'),
  knowledge_base_ids: z.array(z.string().min(1).max(128)).max(50).default([]),
  triggers: triggersSchema.prefault({}),
  binding_channels: z.array(z.string().regex(BINDING_CHANNEL, BINDING_CHANNEL_HINT)).max(50).default([]),
  default: z
    .boolean()
    .default(false)
    .describe("The fallback of the channels it is bound to: answers the messages no workflow's triggers match. At most one per binding channel."),
  mid_turn: z
    .enum(MID_TURN_POLICIES)
    .nullable()
    .default(null)
    .describe(
      "What a chat message sent while a turn runs does: reject, queue, steer or collect; null: the channel's default. The web channel always answers TURN_IN_PROGRESS.",
    ),
  approvals: approvalPoliciesSchema.default([]),
  events: eventsSchema
    .prefault({})
    .describe('Webhooks (POST /api/v1/hooks/{workflow}/{hook}) and schedules that run this workflow and deliver its answer into a chat (issue 29).'),
};

export const workflowInputSchema = z.strictObject(workflowFields).meta({ id: 'WorkflowInput' });
export type WorkflowInput = z.infer<typeof workflowInputSchema>;

/**
 * `triggers` in a PATCH: merged into the stored triggers (JSON merge-patch, decisions.md §8): members
 * sent replace, members absent stay, `null` removes one (back to its default). The merged whole is
 * checked like a full workflow (regex safety included).
 */
export const triggersPatchSchema = z
  .strictObject({
    keywords: z.array(z.string().trim().min(1).max(100)).max(200).nullable().optional(),
    regex: z.array(z.string()).max(50).nullable().optional(),
    contact_tags: z.array(z.string().trim().min(1).max(64)).max(100).nullable().optional(),
    min_score: z.number().min(0).max(1000).nullable().optional(),
  })
  .meta({ id: 'WorkflowTriggersPatch' });

export const workflowPatchSchema = z
  .strictObject({
    // The bare types: a field left out of a patch keeps its value (a default here would reset it).
    description: z.string().max(2_000).optional(),
    system_prompt: z.string().max(200_000).optional(),
    tool_list: z.string().max(2_000).optional(),
    knowledge_base_ids: z.array(z.string().min(1).max(128)).max(50).optional(),
    triggers: triggersPatchSchema.optional().describe('Merged into the stored triggers: members sent replace, absent stay, null removes.'),
    binding_channels: z.array(z.string().regex(BINDING_CHANNEL, BINDING_CHANNEL_HINT)).max(50).optional(),
    default: z.boolean().optional(),
    mid_turn: z.enum(MID_TURN_POLICIES).nullable().optional(),
    approvals: approvalPoliciesSchema.optional().describe('Replaces the whole list.'),
    events: eventsSchema.optional().describe('Replaces the webhooks and schedules.'),
  })
  .meta({ id: 'WorkflowPatch' });
export type WorkflowPatch = z.infer<typeof workflowPatchSchema>;

export const workflowSchema = z
  .object({
    id: z.uuid(),
    name: z.string(),
    description: z.string(),
    system_prompt: z.string(),
    tool_list: z.string(),
    knowledge_base_ids: z.array(z.string()),
    triggers: z.object({ keywords: z.array(z.string()), regex: z.array(z.string()), contact_tags: z.array(z.string()), min_score: z.number().optional() }),
    binding_channels: z.array(z.string()),
    default: z.boolean(),
    mid_turn: z.enum(MID_TURN_POLICIES).nullable(),
    approvals: z.array(approvalPolicySchema),
    events: z.object({ webhooks: z.array(z.record(z.string(), z.unknown())), schedules: z.array(z.record(z.string(), z.unknown())) }),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .meta({ id: 'Workflow' });

/** `"a, b,,c "` → `["a", "b", "c"]`. */
export function toolNames(toolList: string): string[] {
  return toolList
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
}
