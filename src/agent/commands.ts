/** In-chat commands (decisions.md §3), the same on every channel. */
export type Command = { name: 'info' } | { name: 'tools' } | { name: 'tools_load'; tool: string } | { name: 'help' } | { name: 'unknown'; text: string };

/** The command a message is, or null when it is an ordinary message for the model. */
export function parseCommand(text: string): Command | null {
  const trimmed = text.trim();
  if (!trimmed.startsWith('/')) return null;
  const [word, ...rest] = trimmed.split(/\s+/);
  switch (word!.toLowerCase()) {
    case '/info':
      return { name: 'info' };
    case '/help':
      return { name: 'help' };
    case '/tools':
      if (rest.length === 0) return { name: 'tools' };
      if (rest[0]!.toLowerCase() === 'load' && rest[1]) return { name: 'tools_load', tool: rest[1] };
      return { name: 'unknown', text: trimmed };
    default:
      return { name: 'unknown', text: trimmed };
  }
}

export interface ToolLine {
  name: string;
  status: 'active' | 'available' | 'disabled' | 'unavailable';
  requiresConfirmation: boolean;
  note?: string;
  /** The MCP server that provides it (an MCP tool). */
  server?: string;
}

export interface CommandContext {
  /**
   * The sender is an anonymous visitor (the website widget): `/info` names neither model nor tools,
   * and the tool commands are off (ChannelScope.anonymous).
   */
  visitor?: boolean;
  workflow: string | null;
  provider: string;
  model: string;
  mode: string;
  memoryMode: string;
  tools: ToolLine[];
  /** Loads a tool into the session; refusal reasons are shown to the user. */
  loadTool(name: string): Promise<{ ok: true } | { ok: false; reason: string; expansionFailed: boolean }>;
}

export interface CommandResult {
  text: string;
  /** A TOOL_EXPANSION_FAILED error frame goes out before the answer. */
  expansionFailed?: string;
}

export const HELP_TEXT = [
  'Commands:',
  '/info — the active workflow, model, mode and tools',
  '/tools — every tool and its status in this session',
  '/tools load <name> — make a tool available in this session (not when the workflow pins its tools)',
  '/help — this list',
  'Modes: send a message with mode "normal", "think" (analyse, research, reason, answer) or "delegate" (split into sub-tasks worked in parallel).',
].join('\n');

/** What a visitor of an anonymous channel can ask. */
export const VISITOR_HELP_TEXT = ['Commands:', '/info — what answers in this chat', '/help — this list'].join('\n');

/** The answer to a tool command in a chat with anonymous visitors. */
export const VISITOR_NO_TOOLS_TEXT = 'Tool commands are not available in this chat.';

export async function runCommand(command: Command, context: CommandContext): Promise<CommandResult> {
  if (context.visitor) return visitorCommand(command, context);
  switch (command.name) {
    case 'help':
      return { text: HELP_TEXT };
    case 'info': {
      const active = context.tools.filter((tool) => tool.status === 'active').map((tool) => tool.name);
      return {
        text: [
          `Workflow: ${context.workflow ?? 'none (the default assistant)'}`,
          `Model: ${context.model} (${context.provider})`,
          `Mode: ${context.mode}`,
          `Memory: ${context.memoryMode}`,
          `Tools: ${active.length > 0 ? active.join(', ') : 'none'}`,
        ].join('\n'),
      };
    }
    case 'tools':
      return {
        text: context.tools
          .map(
            (tool) =>
              `${tool.name}${tool.server ? ` (MCP: ${tool.server})` : ''} — ${tool.status}${tool.requiresConfirmation ? ' (asks for confirmation)' : ''}${tool.note ? `: ${tool.note}` : ''}`,
          )
          .join('\n'),
      };
    case 'tools_load': {
      const result = await context.loadTool(command.tool);
      if (result.ok) return { text: `Loaded "${command.tool}"; it is available from the next message on.` };
      return { text: `Could not load "${command.tool}": ${result.reason}`, expansionFailed: result.expansionFailed ? result.reason : undefined };
    }
    case 'unknown':
      return { text: `Unknown command "${command.text}".\n\n${HELP_TEXT}` };
  }
}

/** The commands as an anonymous visitor sees them: no model, no tools, nothing to load. */
function visitorCommand(command: Command, context: CommandContext): CommandResult {
  switch (command.name) {
    case 'help':
      return { text: VISITOR_HELP_TEXT };
    case 'info':
      return { text: [`Workflow: ${context.workflow ?? 'none (the default assistant)'}`, `Mode: ${context.mode}`].join('\n') };
    case 'tools':
    case 'tools_load':
      return { text: VISITOR_NO_TOOLS_TEXT };
    case 'unknown':
      return { text: `Unknown command "${command.text}".\n\n${VISITOR_HELP_TEXT}` };
  }
}
