import type { HubClient } from './api-client';
import { listAll } from './sessions-lookup';

/** Workflow id → name, to show sessions' `active_workflow_id` by name (ids are UUIDs). */
export async function workflowNames(client: HubClient): Promise<Map<string, string>> {
  const workflows = await listAll<{ id: string; name: string }>(client, '/assistant/workflows');
  return new Map(workflows.map((workflow) => [workflow.id, workflow.name]));
}
