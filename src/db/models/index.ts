import type { Sequelize } from 'sequelize';
import { initMessageModel } from './message';
import { initSessionModel } from './session';
import { initToolRunModel } from './tool-run';

export { MessageRow, type MessageRole } from './message';
export { SessionRow, type PendingConfirmation, type ToolState, type TurnPhase } from './session';
export { ToolRunRow } from './tool-run';

/** The models bound to one database. */
export interface Models {
  Session: ReturnType<typeof initSessionModel>;
  Message: ReturnType<typeof initMessageModel>;
  ToolRun: ReturnType<typeof initToolRunModel>;
}

export function initModels(sequelize: Sequelize): Models {
  return { Session: initSessionModel(sequelize), Message: initMessageModel(sequelize), ToolRun: initToolRunModel(sequelize) };
}
