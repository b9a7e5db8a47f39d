/** Longest value shown inline in a confirmation message. */
const INLINE_VALUE_LIMIT = 80;

/**
 * The parameters of a `tool_confirm_request`, large values last (spec), so a dialog shows the short,
 * telling ones (path, url) before a long body.
 */
export function sortParameters(input: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(input).sort(([, a], [, b]) => size(a) - size(b)));
}

/** A one-line, human-readable description of the call for the dialog. */
export function describeCall(tool: string, input: Record<string, unknown>): string {
  const parts = Object.entries(sortParameters(input)).map(([name, value]) => {
    const text = typeof value === 'string' ? value : JSON.stringify(value);
    return text.length > INLINE_VALUE_LIMIT ? `${name}: <${text.length} characters>` : `${name}: ${JSON.stringify(value)}`;
  });
  return `Allow "${tool}" to run${parts.length > 0 ? ` with ${parts.join(', ')}` : ''}?`;
}

function size(value: unknown): number {
  return typeof value === 'string' ? value.length : JSON.stringify(value ?? null).length;
}
