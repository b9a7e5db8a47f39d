/**
 * Inline links and images of Markdown found in one left-to-right pass, in time linear in the text.
 * The regexes they replace (`\[([^\]\n]*)\]\(…\)`, and `!\[` with a look-ahead for `](` or `][`)
 * rescanned the rest of a line from every `[`, so a long line of brackets cost quadratic time (80,000
 * characters: 4.2 s of a blocked event loop). Here every "where is the next `]`" question is answered
 * from a table built once, from the end of the text.
 */

/** For each index, the first index at or after it whose character `stops` (text.length when none). */
function nextIndex(text: string, stops: (char: string) => boolean): Int32Array {
  const next = new Int32Array(text.length + 1);
  next[text.length] = text.length;
  for (let index = text.length - 1; index >= 0; index -= 1) next[index] = stops(text[index]!) ? index : next[index + 1]!;
  return next;
}

const WHITE = /\s/;

/** For each index, the first index at or after it that is not white space: skipping a run costs one look-up. */
function nonWhiteTable(text: string): Int32Array {
  return nextIndex(text, (char) => !WHITE.test(char));
}

/**
 * `![label](…` and `![label][…`: the `!` dropped, so the widget shows a link instead of loading an
 * image from anywhere (the same as replacing `/!\[(?=[^\]\n]*\]\s*[([])/g` with `[`).
 */
export function imagesAsLinks(text: string): string {
  if (!text.includes('![')) return text;
  const labelEnd = nextIndex(text, (char) => char === ']' || char === '\n');
  const nonWhite = nonWhiteTable(text);
  let out = '';
  let copied = 0;
  for (let at = text.indexOf('!['); at >= 0; at = text.indexOf('![', at + 1)) {
    const close = labelEnd[at + 2]!;
    if (text[close] !== ']') continue;
    const after = nonWhite[close + 1]!;
    if (text[after] !== '(' && text[after] !== '[') continue;
    out += text.slice(copied, at);
    copied = at + 1; // drop the `!`
  }
  return out + text.slice(copied);
}

/**
 * Every inline link `[label](target "title")`, replaced by what `decide` returns for it (the same
 * matches as the regex `\[([^\]\n]*)\]\(\s*<?([^)\s>]*)>?(?:\s+(?:"[^"\n]*"|'[^'\n]*'))?\s*\)`).
 */
export function replaceInlineLinks(text: string, decide: (whole: string, label: string, target: string) => string): string {
  if (!text.includes('](')) return text;
  const labelEnd = nextIndex(text, (char) => char === ']' || char === '\n');
  const targetEnd = nextIndex(text, (char) => char === ')' || char === '>' || WHITE.test(char));
  const doubleQuoteEnd = nextIndex(text, (char) => char === '"' || char === '\n');
  const singleQuoteEnd = nextIndex(text, (char) => char === "'" || char === '\n');
  const nonWhite = nonWhiteTable(text);
  let out = '';
  let copied = 0;
  let at = text.indexOf('[');
  while (at >= 0) {
    const end = linkEnd(text, at, { labelEnd, targetEnd, doubleQuoteEnd, singleQuoteEnd, nonWhite });
    if (end === null) {
      at = text.indexOf('[', at + 1);
      continue;
    }
    const close = labelEnd[at + 1]!;
    let targetStart = nonWhite[close + 2]!;
    if (text[targetStart] === '<') targetStart += 1;
    out += text.slice(copied, at) + decide(text.slice(at, end.end), text.slice(at + 1, close), text.slice(targetStart, targetEnd[targetStart]!));
    copied = end.end;
    at = text.indexOf('[', end.end);
  }
  return out + text.slice(copied);
}

interface Tables {
  labelEnd: Int32Array;
  targetEnd: Int32Array;
  doubleQuoteEnd: Int32Array;
  singleQuoteEnd: Int32Array;
  nonWhite: Int32Array;
}

/** Where the inline link starting at `[` at `at` ends, or null when none starts there: a few table look-ups. */
function linkEnd(text: string, at: number, tables: Tables): { end: number } | null {
  const close = tables.labelEnd[at + 1]!;
  if (text[close] !== ']' || text[close + 1] !== '(') return null;
  let index = tables.nonWhite[close + 2]!;
  if (text[index] === '<') index += 1;
  index = tables.targetEnd[index]!;
  if (text[index] === '>') index += 1;
  // An optional title after white space: "…" or '…' on one line.
  const beforeTitle = index;
  const titleStart = tables.nonWhite[index]!;
  if (titleStart > beforeTitle && (text[titleStart] === '"' || text[titleStart] === "'")) {
    const quoteEnd = (text[titleStart] === '"' ? tables.doubleQuoteEnd : tables.singleQuoteEnd)[titleStart + 1]!;
    if (text[quoteEnd] === text[titleStart]) index = quoteEnd + 1;
  }
  index = tables.nonWhite[index]!;
  return text[index] === ')' ? { end: index + 1 } : null;
}
