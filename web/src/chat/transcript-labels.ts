import type { AgentState } from '../../../src/protocol/frames';

export function describeError(error: { code: string; message: string }): string {
  return error.code === 'CANCELLED' ? 'Cancelled.' : `${error.message} (${error.code})`;
}

/** Labels of the agent states for the indicator. */
export const STATE_LABELS: Record<AgentState, string> = {
  idle: 'Ready',
  thinking: 'Thinking',
  analyzing: 'Analyzing',
  researching: 'Researching',
  deep_thinking: 'Deep thinking',
  writing: 'Writing',
  delegating: 'Delegating',
  done: 'Done',
  error: 'Error',
};
