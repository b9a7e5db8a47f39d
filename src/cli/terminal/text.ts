import stringWidth from 'string-width';

// C0 controls except tab and newline, DEL, and C1 controls: a model's text may carry escape
// sequences that would move the cursor, retitle the window or worse.
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

/** Text from the hub made safe to write to a terminal: no control characters but tab and newline. */
export function sanitize(text: string): string {
  return text.replace(CONTROL, '');
}

// Escape sequences the CLI itself writes (colours, CSI) and OSC strings: they take no columns.
const ANSI = /\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)/g;

/** `text` without escape sequences: what a terminal shows of it. */
export function stripAnsi(text: string): string {
  return text.replace(ANSI, '');
}

// Made on first use: creating it loads ICU's break rules (~20 ms), which most commands never need.
let segmenter: Intl.Segmenter | undefined;

/** The user-perceived characters of `text` (a flag or an accented letter is one). */
export function graphemes(text: string): string[] {
  segmenter ??= new Intl.Segmenter(undefined, { granularity: 'grapheme' });
  return Array.from(segmenter.segment(text), (segment) => segment.segment);
}

/** Columns `text` takes on a terminal (wide East Asian characters and emoji take two). */
export function visibleWidth(text: string): number {
  return stringWidth(text);
}

/** `text` cut to at most `width` columns, ending in `…` when cut. */
export function truncate(text: string, width: number): string {
  if (width <= 0) return '';
  if (visibleWidth(text) <= width) return text;
  let out = '';
  let used = 0;
  for (const character of graphemes(text)) {
    const next = visibleWidth(character);
    if (used + next > width - 1) break;
    out += character;
    used += next;
  }
  return `${out}…`;
}

/** `text` padded with spaces to `width` columns. */
export function padEnd(text: string, width: number): string {
  return text + ' '.repeat(Math.max(0, width - visibleWidth(text)));
}

/** 850 ms, 3.2 s, 2 min 5 s. */
export function formatDuration(milliseconds: number): string {
  if (milliseconds < 1_000) return `${Math.round(milliseconds)} ms`;
  if (milliseconds < 60_000) return `${(milliseconds / 1_000).toFixed(1)} s`;
  const seconds = Math.round(milliseconds / 1_000);
  return `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
}

/** 1234567 → 1,234,567 (the same in every locale, so output is stable for scripts and tests). */
export function formatCount(value: number): string {
  return String(Math.round(value)).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/** An ISO time as `2026-11-21 14:03` (local time), or `—` for null. */
export function formatTime(iso: string | null): string {
  if (!iso) return '—';
  const date = new Date(iso);
  const pad = (value: number) => String(value).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ${pad(date.getHours())}:${pad(date.getMinutes())}`;
}
