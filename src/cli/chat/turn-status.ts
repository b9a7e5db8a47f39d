import type { DoneInfo, ToolResult, TurnSnapshot } from './turn-follower';
import { formatCount, formatDuration, sanitize } from '../terminal/text';

export const SPINNER = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/** How agent states read on the status line. */
const STATE_LABEL: Record<TurnSnapshot['state'], string> = {
  queued: 'sent, waiting for the hub',
  idle: 'idle',
  thinking: 'thinking',
  analyzing: 'analyzing',
  researching: 'researching',
  deep_thinking: 'thinking deeply',
  writing: 'writing',
  delegating: 'delegating',
  done: 'done',
  error: 'error',
};

export interface ConnectionNote {
  attempt: number;
  maxAttempts: number;
  /** When the next attempt starts (epoch ms). */
  at: number;
  why: string;
}

/**
 * The status line of a running turn: spinner, state, elapsed time, running and finished tools,
 * memory, and what Ctrl-C does. Plain text; the caller cuts it to the terminal's width.
 */
export function formatTurnStatus(
  snapshot: TurnSnapshot,
  now: number,
  options: { frame: number; cancelling: boolean; reconnecting: ConnectionNote | null },
): string {
  const parts: string[] = [];
  if (options.reconnecting) {
    const { attempt, maxAttempts, at, why } = options.reconnecting;
    const wait = Math.max(0, Math.ceil((at - now) / 1_000));
    parts.push(`↻ connection lost (${sanitize(why)}): reconnecting${wait > 0 ? ` in ${wait} s` : ''} (attempt ${attempt} of ${maxAttempts})`);
  } else {
    const label = options.cancelling ? 'cancelling' : STATE_LABEL[snapshot.state];
    parts.push(
      `${SPINNER[options.frame % SPINNER.length]} ${label}${snapshot.catchingUp ? ' (catching up after reconnecting)' : ''} · ${formatDuration(now - snapshot.startedAt)}`,
    );
  }
  for (const { name, startedAt } of snapshot.running.values()) parts.push(`▶ ${sanitize(name)} ${formatDuration(now - startedAt)}`);
  const last = snapshot.finished.at(-1);
  if (last && snapshot.running.size === 0) parts.push(formatToolResult(last));
  if (snapshot.memory) parts.push(`memory ${formatCount(snapshot.memory.tokensUsed)} tokens${snapshot.memory.summarized ? ', summarised' : ''}`);
  parts.push(options.cancelling ? 'Ctrl-C again quits' : 'Ctrl-C cancels');
  return parts.join(' · ');
}

function formatToolResult(result: ToolResult): string {
  return result.error === null ? `✓ ${sanitize(result.name)} ${formatDuration(result.durationMs)}` : `✗ ${sanitize(result.name)}: ${sanitize(result.error)}`;
}

/**
 * The line after a finished turn: time, tokens, tool calls (name, duration, error), and the
 * workflow and memory when the hub reported them.
 */
export function formatDoneSummary(done: DoneInfo, snapshot: TurnSnapshot): string {
  const parts = [`✓ done in ${formatDuration(done.duration_ms)}`];
  // Commands (/help, /info) are answered by the hub, not the model: no tokens to report.
  if (done.total_tokens > 0)
    parts.push(`${formatCount(done.total_tokens)} tokens (${formatCount(done.input_tokens)} in, ${formatCount(done.output_tokens)} out)`);
  const calls = done.tool_calls;
  if (calls > 0) {
    const names = snapshot.finished.map((result) =>
      result.error === null ? `${sanitize(result.name)} ${formatDuration(result.durationMs)}` : `${sanitize(result.name)} ✗ ${sanitize(result.error)}`,
    );
    parts.push(`${calls} tool call${calls === 1 ? '' : 's'}${names.length > 0 ? `: ${names.join(', ')}` : ''}`);
  }
  if (typeof done.workflow === 'string') parts.push(`workflow ${sanitize(done.workflow)}`);
  if (snapshot.memory) parts.push(`memory ${formatCount(snapshot.memory.tokensUsed)} tokens${snapshot.memory.summarized ? ' (summarised)' : ''}`);
  return parts.join(' · ');
}
