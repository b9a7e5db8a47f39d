import { Liquid, type Template } from 'liquidjs';

/**
 * Webhook and schedule templates (`message`, `thread`) in Liquid: a sandboxed template language
 * with no JavaScript evaluation. Unknown variables render empty (strict variables off), so a
 * payload without a field gives an empty text rather than an error.
 */
export const TEMPLATE_DEFAULTS = {
  /** Longest template text accepted in a workflow. */
  maxTemplateChars: 4_000,
  /** Longest rendered message: the turn's user message limit (spec: 65536 characters). */
  maxMessageChars: 65_536,
  /** Longest thread key kept (it becomes part of a session key). */
  maxThreadKeyChars: 120,
} as const;

const engine = new Liquid({ strictVariables: false, strictFilters: true, ownPropertyOnly: true, cache: 200 });

/** Why `text` does not parse as a template, or null when it does. */
export function templateProblem(text: string): string | null {
  try {
    engine.parse(text);
    return null;
  } catch (error) {
    return error instanceof Error ? error.message.split('\n')[0]! : String(error);
  }
}

/** Renders `text` over `scope` (`payload`, `headers`, `schedule`…). Throws when it does not parse or a filter fails. */
export async function renderTemplate(text: string, scope: Record<string, unknown>): Promise<string> {
  const parsed: Template[] = engine.parse(text);
  const rendered = String(await engine.render(parsed, scope));
  return rendered.slice(0, TEMPLATE_DEFAULTS.maxMessageChars);
}

/** A thread key as a session key can hold it: trimmed, `:` and spaces replaced, at most 120 characters. */
export function threadKeyOf(rendered: string): string {
  return rendered
    .trim()
    .replace(/[\s:]+/g, '-')
    .slice(0, TEMPLATE_DEFAULTS.maxThreadKeyChars);
}
