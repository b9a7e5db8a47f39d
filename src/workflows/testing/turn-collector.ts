import type { FollowedTurn } from '../../core/follow-turn';
import type { SessionFrame } from '../../core/events';
import { confirmStep, rememberAsked } from '../../protocol/confirm-questions';
import type { ToolCallSeen, TurnAnswer } from './target';

export interface TurnControls {
  /** Answers a `tool_confirm_request` the way the case says. */
  confirm(confirmationId: string): Promise<void>;
  cancel(): Promise<void>;
}

/**
 * Follows one turn's frames into what a case checks: its tool calls (from `tool_end`), the
 * confirmations asked (each answered at once), the reply (`done.text`, else the streamed tokens) and
 * how it ended. A turn still running after `timeoutMs` is cancelled.
 */
export async function collectTurn(
  follow: (onFrame: (frame: SessionFrame) => void) => Promise<FollowedTurn>,
  controls: TurnControls,
  timeoutMs: number,
): Promise<TurnAnswer> {
  const tools: ToolCallSeen[] = [];
  const confirmations: string[] = [];
  const answered: Promise<void>[] = [];
  let asked: readonly string[] = [];
  let streamed = '';
  const followed = await follow((frame) => {
    if (frame.type === 'tool_end') tools.push({ name: frame.payload.tool_name, error: frame.payload.error });
    else if (frame.type === 'token') streamed += frame.payload.text;
    else if (frame.type === 'tool_confirm_request') {
      // An approval's progress (issue 30) re-sends the question: answered once.
      const step = confirmStep(asked, frame.payload);
      asked = rememberAsked(asked, frame.payload);
      if (step === 'progress') return;
      confirmations.push(frame.payload.tool);
      answered.push(controls.confirm(frame.payload.confirmation_id));
    }
  });
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), timeoutMs)));
  const outcome = await Promise.race([followed.outcome, timedOut]);
  clearTimeout(timer);
  await Promise.allSettled(answered);
  if (outcome === 'timeout') {
    followed.stop();
    await controls.cancel().catch(() => undefined);
    return { ending: `no ending after ${timeoutMs} ms (cancelled)`, workflow: null, reason: null, tools, confirmations, reply: streamed };
  }
  switch (outcome.kind) {
    case 'done':
      return {
        ending: 'done',
        workflow: outcome.done.workflow ?? null,
        reason: outcome.done.routing_reason ?? null,
        tools,
        confirmations,
        reply: outcome.done.text,
      };
    case 'error':
      return { ending: `error ${outcome.code}: ${outcome.message}`, workflow: null, reason: null, tools, confirmations, reply: streamed };
    case 'cancelled':
    case 'merged':
    case 'dropped':
    case 'stopped':
      return { ending: outcome.kind, workflow: null, reason: null, tools, confirmations, reply: streamed };
  }
}
