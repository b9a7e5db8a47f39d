import type { KnowledgeHit } from './tools/knowledge-search';

/** The first line of the passages block in a system prompt; the builtin provider looks for it. */
export const PASSAGES_HEADER = 'Knowledge passages (cite the source):';
/** Between a passage's title and its text. */
export const PASSAGE_SEPARATOR = ' — ';

export interface Passage {
  number: number;
  title: string;
  text: string;
}

/**
 * The block the system prompt gets each turn: the header, then `[n] <title> — <text>` per hit, in
 * rank order, one line each (white space collapsed) so a model — and the builtin provider — can
 * cite `[n]`. No hits: an empty string, so the prompt gets nothing.
 */
export function formatPassages(hits: readonly KnowledgeHit[]): string {
  if (hits.length === 0) return '';
  const lines = hits.map((hit, index) => `[${index + 1}] ${oneLine(hit.title).replaceAll(PASSAGE_SEPARATOR, ' - ')}${PASSAGE_SEPARATOR}${oneLine(hit.text)}`);
  return [PASSAGES_HEADER, ...lines].join('\n');
}

/** The passages of a block made by formatPassages, found anywhere in `text`; none without the header. */
export function parsePassages(text: string): Passage[] {
  const lines = text.split('\n');
  const start = lines.findIndex((line) => line.trim() === PASSAGES_HEADER);
  if (start < 0) return [];
  const passages: Passage[] = [];
  for (const line of lines.slice(start + 1)) {
    const match = /^\[(\d+)\] (.*)$/.exec(line.trim());
    const separator = match ? match[2].indexOf(PASSAGE_SEPARATOR) : -1;
    if (!match || separator < 0) break;
    passages.push({ number: Number(match[1]), title: match[2].slice(0, separator), text: match[2].slice(separator + PASSAGE_SEPARATOR.length) });
  }
  return passages;
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}
