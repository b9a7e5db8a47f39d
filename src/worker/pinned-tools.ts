import { isAnonymousChannel, type ChannelScope } from '../core/channel';
import type { WorkflowRow } from '../db/models';
import type { SessionRecord } from '../db/turn-store';
import { toolNames } from '../workflows/workflow-schema';

/**
 * The tools a turn may use when something pins them: the workflow's tool_list; for an anonymous
 * channel's visitor (the website widget) nothing else either — no workflow, no tools, whatever the
 * session carries (sessions made before this rule carried `agent.default_tools`). Undefined: the
 * session's own tools.
 */
export function pinnedTools(session: SessionRecord, workflow: WorkflowRow | null, channels: readonly ChannelScope[]): readonly string[] | undefined {
  if (workflow) return toolNames(workflow.tool_list);
  return isAnonymousChannel(session.channel, channels) ? [] : undefined;
}
