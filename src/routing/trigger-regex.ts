import { RE2JS } from 're2js';

/**
 * Trigger regexes run on RE2JS, a linear-time engine (no backtracking): a pattern costs at most in
 * proportion to the text it reads times its program's size, whatever the message. JavaScript's own
 * engine backtracks: `error.*timeout` on a 64 KiB message blocked the event loop 1.7 s.
 */

/**
 * Regex triggers read the first this-many characters of a message (keywords read all of it). What a
 * message is about shows at its start; the bound keeps the worst pattern's cost per message to a few
 * milliseconds however long the message (up to 65,536 characters) is.
 */
export const TRIGGER_REGEX_MAX_CHARS = 4_096;

/**
 * Largest RE2 program a trigger may compile to (RE2's own rough measure of a pattern's size, about
 * one per character and per repeated copy: `a{1,100}` counts 100). Matching costs in proportion to
 * it when the engine cannot use its DFA; real triggers stay under 100.
 */
export const TRIGGER_MAX_PROGRAM_SIZE = 1_000;

export interface TriggerRegex {
  readonly source: string;
  /** Whether the pattern occurs in the first TRIGGER_REGEX_MAX_CHARS characters of `text`, case-insensitively. */
  test(text: string): boolean;
}

type Compiled = { regex: TriggerRegex; problem: null; programSize: number } | { regex: null; problem: string };

/**
 * Compiled triggers by pattern: validation, the router's reload in every process and the cost probe
 * compile the same patterns again and again (0.1–0.3 ms each). Bounded; cleared when full.
 */
const compiledCache = new Map<string, Compiled>();
const COMPILED_CACHE_LIMIT = 5_000;

/** The compiled trigger, or the reason RE2 refuses the pattern (lookarounds, backreferences, bad syntax). */
export function compileTrigger(source: string): Compiled {
  let entry = compiledCache.get(source);
  if (!entry) {
    entry = compile(source);
    if (compiledCache.size >= COMPILED_CACHE_LIMIT) compiledCache.clear();
    compiledCache.set(source, entry);
  }
  return entry;
}

function compile(source: string): Compiled {
  let compiled: RE2JS;
  try {
    compiled = RE2JS.compile(source, RE2JS.CASE_INSENSITIVE);
  } catch (error) {
    const reason = error instanceof Error ? error.message.replace(/^error parsing regexp: /, '') : 'syntax';
    return { regex: null, problem: `not a regular expression the linear-time matcher accepts (${reason}; lookarounds and backreferences are not supported)` };
  }
  return {
    regex: { source, test: (text) => compiled.test(text.length > TRIGGER_REGEX_MAX_CHARS ? text.slice(0, TRIGGER_REGEX_MAX_CHARS) : text) },
    problem: null,
    programSize: compiled.programSize(),
  };
}
