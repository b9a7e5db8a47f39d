import type { Migration } from '../migrator';
import { authMigration } from './0001-auth';
import { sessionsAndMessages } from './0002-sessions-and-messages';
import { agent } from './0003-agent';
import { workflows } from './0004-workflows';
import { inboundEvents } from './0006-inbound-events';
import { knowledge } from './0005-knowledge';
import { turnHotPath } from './0007-turn-hot-path';
import { midTurnPolicy } from './0008-mid-turn-policy';
import { observability } from './0009-observability';
import { mcpToolPins } from './0010-mcp-tool-pins';
import { approvals } from './0011-approvals';
import { defaultWorkflow } from './0012-default-workflow';
import { workflowEvents } from './0013-workflow-events';
import { eventDeliveryClaims } from './0014-event-delivery-claims';
import { channelCursors } from './0015-channel-cursors';
import { platformIdentities } from './0016-platform-identities';

/** Every migration, in order. Append only; a released migration is never edited. */
export const MIGRATIONS: readonly Migration[] = [
  authMigration,
  sessionsAndMessages,
  agent,
  workflows,
  knowledge,
  inboundEvents,
  turnHotPath,
  midTurnPolicy,
  observability,
  mcpToolPins,
  approvals,
  defaultWorkflow,
  workflowEvents,
  eventDeliveryClaims,
  channelCursors,
  platformIdentities,
];
