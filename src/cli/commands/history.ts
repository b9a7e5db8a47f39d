import type { Command } from 'commander';
import type { Colors } from 'picocolors/types';
import { connect, type CliContext } from '../context';
import type { MessageView, ToolCallView } from '../../protocol/payloads';
import { fullHistory, resolveSession } from '../sessions-lookup';
import { formatDuration, formatTime, sanitize, truncate } from '../terminal/text';
import { jsonOption, positiveInteger, withHubOptions, type HubOptions } from './hub-options';

/** Characters of a tool result shown in the history (`--json` has all of it). */
const TOOL_OUTPUT_PREVIEW = 300;

/** `switchboard history <session>`: a session's messages, oldest first, with their tool calls. */
export function registerHistory(program: Command, context: CliContext): void {
  withHubOptions(program.command('history'))
    .description("print a session's messages, oldest first, with tool calls (name, duration, error)")
    .argument('<session>', 'session id, or its first characters')
    .option('--last <n>', 'only the newest n messages', positiveInteger)
    .addOption(jsonOption())
    .action(async (reference: string, options: HubOptions & { last?: number; json?: boolean }) => {
      const client = connect(context, options);
      const session = await resolveSession(client, reference);
      let messages = await fullHistory(client, session.id);
      if (options.last !== undefined) messages = messages.slice(-options.last);
      if (options.json) return context.out(JSON.stringify(messages, null, 2));
      if (messages.length === 0) return context.out(`Session ${session.id} has no messages yet.`);
      for (const message of messages) for (const line of formatMessage(message, context.stdout.columns ?? 100, context.colors)) context.out(line);
    });
}

const ROLE_LABEL: Record<MessageView['role'], string> = { user: 'you', assistant: 'assistant', tool: 'tool result', system: 'system' };

function formatMessage(message: MessageView, columns: number, c: Colors): string[] {
  const role = ROLE_LABEL[message.role] ?? message.role;
  const colour = message.role === 'user' ? c.cyan : message.role === 'assistant' ? c.green : c.dim;
  const lines = [colour(c.bold(`── ${role}`)) + c.dim(` · ${formatTime(message.created_at)}`)];
  const content = sanitize(message.content);
  if (message.role === 'tool') lines.push(c.dim(truncate(content.replace(/\s+/g, ' '), Math.min(TOOL_OUTPUT_PREVIEW, columns * 3))));
  else if (content !== '') lines.push(content);
  for (const call of message.tool_calls) lines.push(formatToolCall(call, columns, c));
  lines.push('');
  return lines;
}

function formatToolCall(call: ToolCallView, columns: number, c: Colors): string {
  const name = sanitize(call.tool_name ?? call.name ?? 'tool');
  const input = call.input !== undefined ? ` ${sanitize(JSON.stringify(call.input))}` : call.arguments !== undefined ? ` ${sanitize(call.arguments)}` : '';
  const outcome = call.error
    ? c.red(` ✗ ${sanitize(call.error)}`)
    : typeof call.duration_ms === 'number'
      ? c.dim(` ✓ ${formatDuration(call.duration_ms)}`)
      : '';
  return `  ▶ ${truncate(`${name}${input}`, Math.max(30, columns - 30))}${outcome}`;
}
