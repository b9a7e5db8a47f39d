import type { ChatMessage, ToolCall, ToolSpec } from '../provider';

/**
 * The built-in offline model's tool use: a plain request that names what a built-in tool does
 * becomes a call of that tool (when the session offers it), so a newcomer without an API key sees
 * the whole protocol — tool_start, a confirmation, tool_end, cancel. Patterns, not a language model.
 */
interface Intent {
  tool: string;
  /** The call's input for the user's text, or null when the text is not this intent. */
  match(text: string): Record<string, unknown> | null;
}

const INTENTS: readonly Intent[] = [
  {
    // "write a file notes.txt containing the meeting notes", "create file plan.md with …"
    tool: 'write_file',
    match: (text) => {
      const found =
        /\b(?:write|create|save)\b[^.\n]*?\bfile\s+(?:called\s+|named\s+)?["'`]?([\w./-]+?)["'`]?\s+(?:containing|with(?: the text)?|that says)\s+([\s\S]+)$/i.exec(
          text,
        );
      return found ? { path: found[1]!, content: found[2]!.trim().replace(/^["'`]|["'`]$/g, '') } : null;
    },
  },
  {
    // "what time is it in Tokyo?", "current time in New York"
    tool: 'current_time',
    match: (text) => {
      if (!/\b(?:what time|current time|time is it|the time)\b/i.test(text)) return null;
      const place = /\bin\s+([A-Za-z][A-Za-z _/-]*?)\s*\??\s*$/i.exec(text)?.[1];
      const timezone = place ? timezoneOf(place) : null;
      return timezone ? { timezone } : {};
    },
  },
  {
    // "calculate (1200 * 1.07^3) / 12", "what is 2 + 2?"
    tool: 'calculator',
    match: (text) => {
      const found = /\b(?:calculate|compute|what is|what's|how much is)\s+([-+*/^%().,\d\s]*\d[-+*/^%().,\d\s]*)\??\s*$/i.exec(text);
      return found && /[-+*/^%]/.test(found[1]!) ? { expression: found[1]!.trim() } : null;
    },
  },
  {
    // "search the handbook for rollback", "look up deploys in the knowledge base"
    tool: 'knowledge_search',
    match: (text) => {
      const found =
        /\bsearch\b(?:\s+(?:the|our|my)\s+[\w -]+?)?\s+for\s+["'`]?(.+?)["'`]?\s*\??\s*$/i.exec(text) ??
        /\blook\s+up\s+["'`]?(.+?)["'`]?\s+in\s+the\s+[\w -]+$/i.exec(text);
      return found ? { query: found[1]! } : null;
    },
  },
];

/** The call the built-in model makes for the conversation's last message, if any (and offered). */
export function plannedCall(messages: readonly ChatMessage[], tools: readonly ToolSpec[] | undefined): { call: ToolCall; preamble: string } | null {
  const last = messages.at(-1);
  if (!tools || tools.length === 0 || last?.role !== 'user') return null;
  const offered = new Set(tools.map((tool) => tool.name));
  for (const intent of INTENTS) {
    if (!offered.has(intent.tool)) continue;
    const input = intent.match(last.content.trim());
    if (!input) continue;
    return { call: { id: `builtin_${intent.tool}_1`, name: intent.tool, arguments: JSON.stringify(input) }, preamble: `I'll use ${intent.tool} for that. ` };
  }
  return null;
}

/** After a tool round: what the tools answered, said plainly (the built-in model cannot do more). */
export function describeToolResults(messages: readonly ChatMessage[]): string | null {
  const results: Extract<ChatMessage, { role: 'tool' }>[] = [];
  for (let index = messages.length - 1; index >= 0 && messages[index]!.role === 'tool'; index -= 1) {
    results.unshift(messages[index] as Extract<ChatMessage, { role: 'tool' }>);
  }
  if (results.length === 0) return null;
  const lines = results.map((result) =>
    result.content.startsWith('Error:')
      ? `${result.name} did not run: ${result.content.slice('Error:'.length).trim()}`
      : `${result.name} answered: ${summarise(result.content)}`,
  );
  return `${lines.join(' ')} (I'm the built-in offline assistant: I report what the tools returned.)`;
}

/** A tool's JSON result, shortened for a sentence. */
function summarise(content: string, limit = 400): string {
  return content.length > limit ? `${content.slice(0, limit)}…` : content;
}

/** The IANA zone whose city part names `place` ("Tokyo" → Asia/Tokyo, "new york" → America/New_York). */
function timezoneOf(place: string): string | null {
  const wanted = place
    .trim()
    .toLowerCase()
    .replace(/[\s-]+/g, '_');
  const zones = (Intl as unknown as { supportedValuesOf(key: 'timeZone'): string[] }).supportedValuesOf('timeZone');
  return zones.find((zone) => zone.toLowerCase() === wanted || zone.toLowerCase().split('/').at(-1) === wanted) ?? null;
}
