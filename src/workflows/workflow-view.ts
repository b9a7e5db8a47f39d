import type { MidTurnPolicy } from '../core/turns';
import type { WorkflowRow } from '../db/models';
import { storedPolicies } from '../approvals/stored-policies';
import { NO_EVENTS, type WorkflowEvents } from './events-schema';

/** A workflow as the API shows it. */
export function workflowView(row: WorkflowRow) {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    system_prompt: row.system_prompt,
    tool_list: row.tool_list,
    knowledge_base_ids: row.knowledge_base_ids,
    triggers: row.triggers,
    binding_channels: row.binding_channels,
    default: row.default ?? false,
    mid_turn: (row.mid_turn ?? null) as MidTurnPolicy | null,
    approvals: storedPolicies(row.approvals),
    events: (row.events ?? NO_EVENTS) as WorkflowEvents,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

export type WorkflowView = ReturnType<typeof workflowView>;
