/**
 * A literal every match of a trigger regex must contain, so routing can skip the regex when the
 * message does not contain it (`text.includes` is far cheaper than running hundreds of patterns).
 * Conservative by construction: only characters at the pattern's top level count (never inside a
 * group, a class or an alternation), and a character a quantifier makes optional ends the run.
 * Returns the longest such run (lowercased: triggers match case-insensitively), or null.
 */
export const MIN_LITERAL_LENGTH = 3;

/** Escapes that stand for themselves. */
const LITERAL_ESCAPE = /^[-/\\.^$*+?()[\]{}|:#!@%&=,;'"<>`~ ]$/;

export function requiredLiteral(source: string): string | null {
  // Escapes that name other characters (\u0041, \x41, \p{…}, \cJ) or earlier groups: no guess.
  if (hasTopLevelAlternation(source) || /\\[uxpPkc0-9]/.test(source)) return null;
  let best = '';
  let run = '';
  const end = () => {
    if (run.length > best.length) best = run;
    run = '';
  };
  for (let index = 0; index < source.length; index += 1) {
    const char = source[index]!;
    let literal: string | null = null;
    let width = 1;
    if (char === '\\') {
      const next = source[index + 1] ?? '';
      if (LITERAL_ESCAPE.test(next)) literal = next;
      width = 2;
    } else if (char === '(' || char === '[') {
      end();
      index = skipGroup(source, index) - 1;
      continue;
    } else if (char === '{') {
      // A quantifier's braces ({2}, {0,3}): never literal text.
      end();
      index += (/^\{\d*(,\d*)?\}/.exec(source.slice(index))?.[0].length ?? 1) - 1;
      continue;
    } else if (!'.^$|*+?{'.includes(char)) {
      literal = char;
    }
    const after = source[index + width] ?? '';
    const optional = after === '?' || after === '*' || (after === '{' && /^\{0[,}]/.test(source.slice(index + width)));
    if (literal === null || optional) {
      end();
    } else {
      run += literal;
      // One copy is required even when repeated (`a+`, `a{2,}`); what follows is no longer adjacent.
      if (after === '+' || after === '{') end();
    }
    index += width - 1;
  }
  end();
  return best.length >= MIN_LITERAL_LENGTH && /^[\x20-\x7e]+$/.test(best) ? best.toLowerCase() : null;
}

/**
 * The message as the literals are looked up in: lowercased, with the one ASCII-letter case variant
 * `toLowerCase` keeps (U+017F, long s, which a case-insensitive Unicode regex matches as `s`;
 * the Kelvin sign lowercases to `k` by itself).
 */
export function literalHaystack(text: string): string {
  return text.toLowerCase().replace(/\u017f/g, 's');
}

function hasTopLevelAlternation(source: string): boolean {
  let depth = 0;
  let inClass = false;
  for (let index = 0; index < source.length; index += 1) {
    const char = source[index]!;
    if (char === '\\') {
      index += 1;
      continue;
    }
    if (inClass) {
      if (char === ']') inClass = false;
      continue;
    }
    if (char === '[') inClass = true;
    else if (char === '(') depth += 1;
    else if (char === ')') depth -= 1;
    else if (char === '|' && depth === 0) return true;
  }
  return false;
}

/** The index after the group or class that starts at `start` (and after its quantifier). */
function skipGroup(source: string, start: number): number {
  let depth = 0;
  let inClass = false;
  let index = start;
  for (; index < source.length; index += 1) {
    const char = source[index]!;
    if (char === '\\') {
      index += 1;
      continue;
    }
    if (inClass) {
      if (char === ']') {
        inClass = false;
        if (depth === 0) break;
      }
      continue;
    }
    if (char === '[') inClass = true;
    else if (char === '(') depth += 1;
    else if (char === ')') {
      depth -= 1;
      if (depth === 0) break;
    }
  }
  return index + 1;
}
