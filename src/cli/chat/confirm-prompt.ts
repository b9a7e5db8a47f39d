import type { Colors } from 'picocolors/types';
import type { ConfirmRequest } from './turn-follower';
import type { ConfirmAction } from '../../protocol/confirm-actions';
import type { KeyPress } from '../terminal/key-input';
import { formatCount, padEnd, sanitize, truncate, visibleWidth } from '../terminal/text';

/** The spec's "CLI key" column: one key per `tool_confirm` action. Enter means `y`. */
export const CONFIRM_KEYS: readonly { key: string; action: ConfirmAction; label: string; done: string }[] = [
  { key: 'y', action: 'allow', label: 'yes', done: 'allowed once' },
  { key: 'n', action: 'deny', label: 'no', done: 'denied' },
  { key: 'a', action: 'allow_all', label: 'allow all', done: 'allowed for the rest of this session' },
  { key: 'd', action: 'disable', label: 'disable', done: 'tool disabled for this session' },
  { key: 'f', action: 'forbid_all', label: 'forbid all', done: 'every further tool refused this turn' },
  { key: 'c', action: 'cancel', label: 'cancel', done: 'turn cancelled' },
];

/** The action of a key press (`y`, `Y`, Enter …), or null for any other key. */
export function actionForKey(key: KeyPress): ConfirmAction | null {
  if (key.ctrl || key.meta) return null;
  if (key.name === 'return' || key.name === 'enter') return 'allow';
  const pressed = (key.sequence ?? '').toLowerCase();
  return CONFIRM_KEYS.find((entry) => entry.key === pressed)?.action ?? null;
}

export function describeAction(action: ConfirmAction): string {
  return CONFIRM_KEYS.find((entry) => entry.action === action)!.done;
}

/** One parameter value on one line: strings quoted with their escapes (`\n` stays visible). */
function oneLine(value: unknown): string {
  return sanitize(JSON.stringify(value) ?? String(value));
}

/**
 * The confirmation dialog: the tool, the hub's one-line message, then the parameters one per line,
 * short values first (large ones last), each cut to the terminal's width with its length noted.
 */
export function formatConfirmRequest(request: ConfirmRequest, columns: number, colors: Colors): string[] {
  const lines = [colors.yellow(colors.bold(`? ${sanitize(request.tool)} needs your confirmation`)), `  ${sanitize(request.message)}`];
  const entries = Object.entries(request.parameters ?? {})
    .map(([name, value]) => ({ name: sanitize(name), text: oneLine(value), length: typeof value === 'string' ? [...value].length : oneLine(value).length }))
    .sort((left, right) => left.text.length - right.text.length);
  const nameWidth = Math.min(20, Math.max(0, ...entries.map((entry) => visibleWidth(entry.name))));
  for (const entry of entries) {
    const room = Math.max(20, columns - nameWidth - 6);
    let text = entry.text;
    if (visibleWidth(text) > room) {
      const note = ` (${formatCount(entry.length)} characters)`;
      text = `${truncate(text, Math.max(10, room - note.length))}${colors.dim(note)}`;
    }
    lines.push(`    ${colors.cyan(padEnd(truncate(entry.name, nameWidth), nameWidth))}  ${text}`);
  }
  return lines;
}

/** The width of the long question; narrower terminals get `Allow? [Y/n/a/d/f/c] › `. */
const LONG_QUESTION_COLUMNS = 70;

/** The question under the dialog: `Allow? [Y]es [n]o [a]llow all [d]isable [f]orbid all [c]ancel › `. */
export function confirmQuestion(colors: Colors, columns = Infinity): string {
  if (columns < LONG_QUESTION_COLUMNS) return `  Allow? ${colors.bold('[Y/n/a/d/f/c]')} › `;
  const choices = CONFIRM_KEYS.map((entry) => {
    const key = entry.key === 'y' ? 'Y' : entry.key;
    return `${colors.bold(`[${key}]`)}${entry.label.slice(1)}`;
  });
  return `  Allow? ${choices.join(' ')} › `;
}
