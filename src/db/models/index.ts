import type { Sequelize } from 'sequelize';
import { initMessageModel } from './message';
import { initSessionModel } from './session';

export { MessageRow, type MessageRole } from './message';
export { SessionRow, type TurnPhase } from './session';

/** The models bound to one database. */
export interface Models {
  Session: ReturnType<typeof initSessionModel>;
  Message: ReturnType<typeof initMessageModel>;
}

export function initModels(sequelize: Sequelize): Models {
  return { Session: initSessionModel(sequelize), Message: initMessageModel(sequelize) };
}
