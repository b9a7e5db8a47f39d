import vm from 'node:vm';
import { compileTrigger, TRIGGER_REGEX_MAX_CHARS } from '../routing/trigger-regex';

/**
 * The cost probe of trigger regexes, run in a worker thread (src/offload) when a workflow is saved:
 * each pattern is matched against texts of the longest length a trigger reads, built from its own
 * characters (runs of one character, and mixes that keep the linear-time engine off its fast DFA
 * path). A pattern whose slowest probe takes longer than the budget is refused.
 */
export interface ProbeInput {
  patterns: string[];
  budgetMs: number;
  attempts: number;
  /** Length of the probes of the backtracking check (exponential patterns blow up long before it). */
  backtrackingProbeChars: number;
  backtrackingTimeoutMs: number;
}

export type ProbeResult = { kind: 'ok' } | { kind: 'slow'; ms: number } | { kind: 'backtracking' };

/** For each pattern: fine, too slow here (the slowest probe's milliseconds), or exponential in a backtracking engine. */
export function probeRegexCosts(input: ProbeInput): ProbeResult[] {
  return input.patterns.map((pattern): ProbeResult => {
    const compiled = compileTrigger(pattern).regex;
    if (!compiled) return { kind: 'ok' }; // refused by the synchronous check already
    if (exponential(pattern, input)) return { kind: 'backtracking' };
    let slowest = 0;
    for (const probe of probes(pattern)) {
      // The fastest of a few attempts: a GC pause or a busy machine slows one, never all.
      let best = Infinity;
      for (let attempt = 0; attempt < input.attempts && best > input.budgetMs; attempt += 1) {
        const started = performance.now();
        compiled.test(probe);
        best = Math.min(best, performance.now() - started);
      }
      slowest = Math.max(slowest, best);
      if (slowest > input.budgetMs) return { kind: 'slow', ms: Math.round(slowest) };
    }
    return { kind: 'ok' };
  });
}

/**
 * Whether JavaScript's backtracking engine takes exponential time on the pattern (`(x|x)*y`: overlapping
 * alternatives under a quantifier), which the star-height check cannot see: short probes of its own
 * characters, under vm's timeout (which can interrupt a runaway match; this runs in a worker).
 * Harmless to the router's engine, but refused (decisions.md §4) so a workflow stays safe to copy
 * to any engine. The timeout is wall-clock time, so a probe that runs out of it is tried again, as
 * the cost probe is: a busy machine (a CI run once starved this thread past 100 ms and a repository
 * workflow's safe pattern was refused) stalls a cheap probe once, an exponential one every time.
 */
function exponential(pattern: string, input: ProbeInput): boolean {
  let compiled: RegExp;
  try {
    compiled = new RegExp(pattern, 'iu');
  } catch {
    return false; // RE2-only syntax: JavaScript never runs it
  }
  const context = vm.createContext({ pattern: compiled, probe: '' });
  const test = new vm.Script('pattern.test(probe)');
  return alphabetOf(pattern).some((character) => {
    const probe = `${character.repeat(input.backtrackingProbeChars)}!`;
    return timesOutEveryTime(input.attempts, () => {
      context.probe = probe;
      test.runInContext(context, { timeout: input.backtrackingTimeoutMs });
    });
  });
}

/** Whether `run` throws (vm's timeout) on every one of `attempts` tries; one that finishes ends the tries. */
export function timesOutEveryTime(attempts: number, run: () => void): boolean {
  for (let attempt = 0; attempt < attempts; attempt += 1) {
    try {
      run();
      return false;
    } catch {
      // Out of time (or the engine gave up): tried again.
    }
  }
  return true;
}

function alphabetOf(pattern: string): string[] {
  const characters = [...new Set(pattern.replace(/\\./g, '').replace(/[^\p{L}\p{N} _-]/gu, ''))].slice(0, 8);
  return characters.length > 0 ? characters : ['a'];
}

function probes(pattern: string): string[] {
  const alphabet = alphabetOf(pattern);
  const length = TRIGGER_REGEX_MAX_CHARS;
  const runs = [...alphabet, 'a', ' '].map((character) => character.repeat(length));
  // A fixed pseudo-random mix (the same every time), of two and of all of the pattern's characters.
  let seed = 0x2f6b;
  const next = () => (seed = (seed * 1_103_515_245 + 12_345) & 0x7fffffff);
  const mix = (from: string[]) => Array.from({ length }, () => from[next() % from.length]).join('');
  return [...runs, mix(alphabet.slice(0, 2).concat(alphabet.length < 2 ? ['b'] : [])), mix([...alphabet, ' '])];
}
