import safeRegex from 'safe-regex2';
import { runOffThread } from '../offload/off-thread';
import { compileTrigger, TRIGGER_MAX_PROGRAM_SIZE, TRIGGER_REGEX_MAX_CHARS } from '../routing/trigger-regex';
import type { ProbeInput, ProbeResult } from './regex-probe';

/** Longest trigger pattern accepted. */
export const MAX_PATTERN_LENGTH = 500;
/**
 * Longest a trigger may take on its slowest probe (a text of TRIGGER_REGEX_MAX_CHARS characters built
 * from its own characters). Real triggers take well under a millisecond; one over this could cost a
 * message that much on every workflow that has it.
 */
export const PROBE_BUDGET_MS = 20;
/**
 * A probe over budget is tried again this many times (the fastest counts): a busy machine or a GC
 * pause slows a cheap pattern once, while a costly one is slow every time.
 */
export const PROBE_ATTEMPTS = 3;
/** The probes of one save run off the event loop, in a worker given this long (and this heap). */
export const PROBE_TIMEOUT_MS = 30_000;
/**
 * The backtracking check: probes this long, each given this long in JavaScript's engine. An exponential
 * pattern (`(x|x)*y`) needs 2^40 steps on them; a polynomial one a few thousand.
 */
export const BACKTRACKING_PROBE_CHARS = 40;
export const BACKTRACKING_TIMEOUT_MS = 100;
const PROBE_HEAP_MB = 64;

/**
 * Why a trigger regex is refused, or null when it is acceptable — the checks that cost nothing
 * (bounded by the pattern's 500 characters): it must compile in the linear-time engine the router
 * uses (RE2 syntax), stay under its program-size bound, and have no nested quantifiers (safe-regex2's
 * star-height check: harmless to RE2, but catastrophic in every backtracking engine a workflow may be
 * copied to). The cost probe (regexCostProblems) comes after, off the event loop.
 */
export function regexProblem(pattern: string): string | null {
  if (pattern.length > MAX_PATTERN_LENGTH) return `longer than ${MAX_PATTERN_LENGTH} characters`;
  const compiled = compileTrigger(pattern);
  if (compiled.problem !== null) return compiled.problem;
  const size = compiled.programSize;
  if (size > TRIGGER_MAX_PROGRAM_SIZE)
    return `too large once compiled (${size} instructions; at most ${TRIGGER_MAX_PROGRAM_SIZE}: fewer or smaller counted repeats)`;
  let backtracking = false;
  try {
    backtracking = !safeRegex(new RegExp(pattern, 'iu'));
  } catch {
    // RE2-only syntax JavaScript does not parse: not a backtracking pattern there either.
  }
  if (backtracking) return 'prone to catastrophic backtracking (nested quantifiers)';
  return null;
}

/** Patterns that passed the probe in this process: saving a workflow again does not probe them again. */
const probed = new Set<string>();
const PROBED_MEMORY = 10_000;

/**
 * The cost probe of patterns that passed regexProblem, in a worker thread: for each, null or why it
 * is refused. Saving a workflow (and `dry_run`) waits for it; the hub's event loop does not.
 */
export async function regexCostProblems(patterns: readonly string[]): Promise<(string | null)[]> {
  // Patterns the schema refused never get here; one RE2 refuses is skipped by the probe itself.
  const fresh = [...new Set(patterns.filter((pattern) => !probed.has(pattern)))];
  const found = new Map<string, ProbeResult>();
  if (fresh.length > 0) {
    const input: ProbeInput = {
      patterns: fresh,
      budgetMs: PROBE_BUDGET_MS,
      attempts: PROBE_ATTEMPTS,
      backtrackingProbeChars: BACKTRACKING_PROBE_CHARS,
      backtrackingTimeoutMs: BACKTRACKING_TIMEOUT_MS,
    };
    let results: ProbeResult[];
    try {
      results = await runOffThread<ProbeResult[]>(require.resolve('./regex-probe'), 'probeRegexCosts', input, {
        timeoutMs: PROBE_TIMEOUT_MS,
        maxHeapMb: PROBE_HEAP_MB,
      });
    } catch {
      // The probe itself ran out of time: every pattern it had counts as too slow.
      results = fresh.map(() => ({ kind: 'slow', ms: PROBE_TIMEOUT_MS }));
    }
    fresh.forEach((pattern, index) => found.set(pattern, results[index] ?? { kind: 'ok' }));
    for (const [pattern, result] of found) {
      if (result.kind !== 'ok') continue;
      if (probed.size >= PROBED_MEMORY) probed.clear();
      probed.add(pattern);
    }
  }
  return patterns.map((pattern) => {
    const result = found.get(pattern);
    if (!result || result.kind === 'ok') return null;
    if (result.kind === 'backtracking') return 'prone to catastrophic backtracking (exponential on a short input)';
    return `too slow: ${result.ms} ms on a ${TRIGGER_REGEX_MAX_CHARS}-character probe (at most ${PROBE_BUDGET_MS} ms)`;
  });
}
