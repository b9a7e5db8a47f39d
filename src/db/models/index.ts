import type { Sequelize } from 'sequelize';
import { initMessageModel } from './message';
import { initSessionModel } from './session';
import { initToolRunModel } from './tool-run';
import { initWorkflowModels } from './workflow';
import { initInboundEventModel } from './inbound-event';
import { initObservabilityModels } from './observability';
import { initApprovalModels } from './approval';
import { initEventModels } from './events';

export { MessageRow, type MessageRole } from './message';
export { SessionRow, type PendingConfirmation, type ToolState, type TurnPhase } from './session';
export { ToolRunRow } from './tool-run';
export { InboundEventRow } from './inbound-event';
export { AuditEventRow, UsageDailyRow } from './observability';
export { ApprovalRow, ApprovalVoteRow } from './approval';
export { EventDeliveryRow, EventScheduleRow, EventThreadRow, SessionAliasRow, type DeliveryStatus } from './events';
export { ContactRow, WorkflowRow, type Triggers } from './workflow';

/** The models bound to one database. */
export interface Models {
  Session: ReturnType<typeof initSessionModel>;
  Message: ReturnType<typeof initMessageModel>;
  ToolRun: ReturnType<typeof initToolRunModel>;
  Workflow: ReturnType<typeof initWorkflowModels>['Workflow'];
  Contact: ReturnType<typeof initWorkflowModels>['Contact'];
  InboundEvent: ReturnType<typeof initInboundEventModel>;
  AuditEvent: ReturnType<typeof initObservabilityModels>['AuditEvent'];
  UsageDaily: ReturnType<typeof initObservabilityModels>['UsageDaily'];
  Approval: ReturnType<typeof initApprovalModels>['Approval'];
  ApprovalVote: ReturnType<typeof initApprovalModels>['ApprovalVote'];
  EventDelivery: ReturnType<typeof initEventModels>['EventDelivery'];
  EventThread: ReturnType<typeof initEventModels>['EventThread'];
  SessionAlias: ReturnType<typeof initEventModels>['SessionAlias'];
  EventSchedule: ReturnType<typeof initEventModels>['EventSchedule'];
}

export function initModels(sequelize: Sequelize): Models {
  return {
    Session: initSessionModel(sequelize),
    Message: initMessageModel(sequelize),
    ToolRun: initToolRunModel(sequelize),
    ...initWorkflowModels(sequelize),
    InboundEvent: initInboundEventModel(sequelize),
    ...initObservabilityModels(sequelize),
    ...initApprovalModels(sequelize),
    ...initEventModels(sequelize),
  };
}
