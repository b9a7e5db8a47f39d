/**
 * How deeply an HTML document nests, found in one linear pass, before any parser sees it: HTML
 * parsers keep a stack of open elements and htmlparser2 (under html-to-text) shifts it at every
 * start tag, so 200,000 nested `<div>` cost it 28 s. Counted conservatively low: elements whose end
 * tag is optional (`p`, `li`, `td`, `tr`, `option`…) are closed by their next sibling in every
 * parser, so they do not count; void elements never open.
 */

const VOID = new Set([
  'area',
  'base',
  'br',
  'col',
  'embed',
  'hr',
  'img',
  'input',
  'link',
  'meta',
  'param',
  'source',
  'track',
  'wbr',
  'keygen',
  'frame',
  'basefont',
  'bgsound',
]);
const OPTIONAL_END = new Set(['p', 'li', 'dt', 'dd', 'option', 'optgroup', 'tr', 'td', 'th', 'thead', 'tbody', 'tfoot', 'colgroup', 'rb', 'rt', 'rp', 'rtc']);
/** Their content is text up to their end tag: a `<div>` inside a script opens nothing. */
const RAW_TEXT = new Set(['script', 'style', 'textarea', 'title', 'xmp', 'iframe', 'noembed', 'noframes', 'noscript']);

export interface Nesting {
  /** The deepest nesting reached (up to `limit + 1`). */
  depth: number;
  /** Where the element that went past `limit` starts, or null when the document stays within it. */
  cutAt: number | null;
}

/** Scans `html` once; stops at the first element nested deeper than `limit`. */
export function htmlNesting(html: string, limit: number): Nesting {
  let depth = 0;
  let deepest = 0;
  let at = html.indexOf('<');
  while (at >= 0 && at < html.length) {
    const next = html[at + 1] ?? '';
    let end: number;
    if (html.startsWith('<!--', at)) {
      end = html.indexOf('-->', at + 4);
      end = end < 0 ? html.length : end + 3;
    } else if (next === '!' || next === '?') {
      end = tagEnd(html, at + 2);
    } else if (next === '/') {
      end = tagEnd(html, at + 2);
      const name = tagName(html, at + 2);
      if (name && !VOID.has(name) && !OPTIONAL_END.has(name)) depth = Math.max(0, depth - 1);
    } else if (/[A-Za-z]/.test(next)) {
      const name = tagName(html, at + 1)!;
      end = tagEnd(html, at + 1);
      const selfClosing = html[end - 2] === '/';
      if (RAW_TEXT.has(name) && !selfClosing) {
        end = rawTextEnd(html, end, name);
      } else if (!VOID.has(name) && !OPTIONAL_END.has(name) && !selfClosing) {
        depth += 1;
        if (depth > deepest) deepest = depth;
        if (depth > limit) return { depth, cutAt: at };
      }
    } else {
      end = at + 1; // a `<` in text
    }
    at = html.indexOf('<', end);
  }
  return { depth: deepest, cutAt: null };
}

function tagName(html: string, from: number): string | null {
  const match = /^[A-Za-z][A-Za-z0-9-]*/.exec(html.slice(from, from + 64));
  return match ? match[0].toLowerCase() : null;
}

/** Index after the `>` that ends the tag starting before `from` (quoted attribute values may hold `>`). */
function tagEnd(html: string, from: number): number {
  let quote: string | null = null;
  for (let index = from; index < html.length; index += 1) {
    const char = html[index];
    if (quote) {
      if (char === quote) quote = null;
    } else if (char === '"' || char === "'") {
      // Only a quote that opens an attribute value (after `=`) quotes; a stray one is text.
      if (html[index - 1] === '=' || /=\s*$/.test(html.slice(Math.max(from, index - 8), index))) quote = char;
    } else if (char === '>') {
      return index + 1;
    }
  }
  return html.length;
}

function rawTextEnd(html: string, from: number, name: string): number {
  const closing = new RegExp(`</${name}[\\s/>]`, 'gi');
  closing.lastIndex = from;
  const found = closing.exec(html);
  return found ? found.index : html.length;
}
