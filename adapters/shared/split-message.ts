/**
 * Splits an answer longer than Telegram's message limit into pieces of at most `limit` characters
 * (UTF-16 code units, as Telegram counts), in order. Each cut is made at the best break in the
 * piece's second half: a paragraph break, else a line break, else the end of a sentence, else a
 * space between words; only text with none of them is cut hard (never inside a surrogate pair).
 * The whitespace at a cut is dropped; nothing else is lost.
 */
export function splitMessage(text: string, limit: number): string[] {
  if (limit < 2) throw new Error('splitMessage: limit must be at least 2');
  const pieces: string[] = [];
  let rest = text;
  while (rest.length > limit) {
    const { at, skip } = findCut(rest, limit);
    pieces.push(rest.slice(0, at));
    rest = rest.slice(at + skip);
  }
  if (rest.length > 0 || pieces.length === 0) pieces.push(rest);
  return pieces;
}

interface Cut {
  /** The piece ends before this index. */
  at: number;
  /** Characters at the cut that belong to neither piece (the break itself). */
  skip: number;
}

/** Sentence ends: . ! ? … (with closing quotes or brackets) followed by whitespace. */
const SENTENCE_END = /[.!?…]["'”’»)\]]*(\s+)/g;

function findCut(text: string, limit: number): Cut {
  const earliest = Math.floor(limit / 2);
  const paragraph = lastBreak(text, /\n[ \t]*\n\s*/g, limit, earliest);
  if (paragraph) return paragraph;
  const line = lastBreak(text, /[ \t]*\n/g, limit, earliest);
  if (line) return line;
  const sentence = lastSentenceEnd(text, limit, earliest);
  if (sentence) return sentence;
  const word = lastBreak(text, /[ \t]+/g, limit, earliest);
  if (word) return word;
  // No break at all: a hard cut, moved back off the high half of a surrogate pair (an emoji).
  const at = /[\uD800-\uDBFF]/.test(text[limit - 1]!) ? limit - 1 : limit;
  return { at, skip: 0 };
}

/** The last match of `pattern` starting in [earliest, limit]: the piece ends where the break starts. */
function lastBreak(text: string, pattern: RegExp, limit: number, earliest: number): Cut | null {
  let found: Cut | null = null;
  pattern.lastIndex = earliest;
  const head = text.slice(0, limit + 1);
  for (let match = pattern.exec(head); match && match.index <= limit; match = pattern.exec(head)) {
    if (match.index >= earliest && match.index > 0) found = { at: match.index, skip: breakLength(text, match.index, pattern) };
    if (match[0].length === 0) pattern.lastIndex += 1;
  }
  return found;
}

/** The whole break from `index` in the full text (it may run past the head the search looked at). */
function breakLength(text: string, index: number, pattern: RegExp): number {
  const sticky = new RegExp(pattern.source, 'y');
  sticky.lastIndex = index;
  return sticky.exec(text)?.[0].length ?? 0;
}

function lastSentenceEnd(text: string, limit: number, earliest: number): Cut | null {
  let found: Cut | null = null;
  const head = text.slice(0, limit + 1);
  SENTENCE_END.lastIndex = 0;
  for (let match = SENTENCE_END.exec(head); match; match = SENTENCE_END.exec(head)) {
    const at = match.index + match[0].length - match[1]!.length;
    if (at > limit) break;
    if (at >= earliest) found = { at, skip: breakLength(text, at, /\s+/g) };
  }
  return found;
}
