import vm from 'node:vm';
import safeRegex from 'safe-regex2';

/** Longest trigger pattern accepted. */
export const MAX_PATTERN_LENGTH = 500;
/** Time one probe may take before the pattern counts as prone to catastrophic backtracking. */
export const PROBE_TIMEOUT_MS = 100;
/**
 * A probe that times out is tried again this many times: a busy machine (or a GC pause) can slow a
 * safe pattern once, while a catastrophic one times out every time.
 */
export const PROBE_ATTEMPTS = 3;
const PROBE_LENGTH = 5_000;

/**
 * Why a trigger regex is refused, or null when it is safe to run on every message: it must compile,
 * have no nested quantifiers (safe-regex2's star-height check), and survive probes built from its own
 * characters within a time limit (catches overlapping alternations such as `(a|a)*b`).
 */
export function regexProblem(pattern: string): string | null {
  if (pattern.length > MAX_PATTERN_LENGTH) return `longer than ${MAX_PATTERN_LENGTH} characters`;
  let compiled: RegExp;
  try {
    compiled = new RegExp(pattern, 'iu');
  } catch (error) {
    return `not a valid regular expression (${error instanceof Error ? error.message.replace(/^Invalid regular expression: /, '') : 'syntax'})`;
  }
  if (!safeRegex(compiled)) return 'prone to catastrophic backtracking (nested quantifiers)';
  const characters = [...new Set(pattern.replace(/\\./g, '').replace(/[^\p{L}\p{N} _-]/gu, ''))].slice(0, 8);
  const probes = [...characters.map((character) => `${character.repeat(PROBE_LENGTH)}!`), `${'a'.repeat(PROBE_LENGTH)}!`, `${' '.repeat(PROBE_LENGTH)}!`];
  for (const probe of probes) {
    if (!finishesInTime(compiled, probe)) return 'prone to catastrophic backtracking (too slow on a long input)';
  }
  return null;
}

function finishesInTime(pattern: RegExp, input: string): boolean {
  for (let attempt = 0; attempt < PROBE_ATTEMPTS; attempt += 1) {
    try {
      // vm's timeout interrupts a runaway match, which a plain call could not.
      vm.runInNewContext('pattern.test(input)', { pattern, input }, { timeout: PROBE_TIMEOUT_MS });
      return true;
    } catch {
      // timed out: try again, unless every attempt does
    }
  }
  return false;
}
