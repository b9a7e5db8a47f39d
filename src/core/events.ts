/**
 * The event union lives in the wire protocol (src/protocol/frames.ts), shared with the CLI and the
 * Web UI; these names stay importable from here.
 */
export { CONFIRM_ACTIONS, type ConfirmAction } from '../protocol/confirm-actions';
export {
  AGENT_STATES,
  TURN_MODES,
  WORKING_STATES,
  type AgentEvent,
  type AgentEventType,
  type AgentState,
  type ApprovalProgress,
  type DonePayload,
  type PongEvent,
  type SessionFrame,
  type SessionFrameBody,
  type SessionTakenOverNotice,
  type TurnMode,
  type TurnTag,
} from '../protocol/frames';
