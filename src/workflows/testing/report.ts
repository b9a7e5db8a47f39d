import type { CaseResult } from './runner';

/** The label of "no workflow" in the matrix. */
export const DEFAULT_LABEL = '(default)';

/** One line per case: `✓ <file> › <name> (<ms> ms)`, failures indented below. */
export function caseLines(result: CaseResult): string[] {
  const head = `${result.failures.length === 0 ? '✓' : '✗'} ${result.testCase.file} › ${result.testCase.name} (${result.durationMs} ms)`;
  return [head, ...result.failures.map((failure) => `    ${failure}`)];
}

/** `12 cases: 11 passed, 1 failed (340 ms)`. */
export function summaryLine(results: readonly CaseResult[], elapsedMs: number): string {
  const failed = results.filter((result) => result.failures.length > 0).length;
  return `${results.length} case(s): ${results.length - failed} passed, ${failed} failed (${elapsedMs} ms)`;
}

/** Expected × picked counts over every case the router answered. */
export interface ConfusionMatrix {
  labels: string[];
  /** counts[expected][picked] */
  counts: Map<string, Map<string, number>>;
}

export function confusionMatrix(results: readonly CaseResult[]): ConfusionMatrix {
  const counts = new Map<string, Map<string, number>>();
  const labels = new Set<string>();
  for (const result of results) {
    if (!result.routing) continue;
    const expected = result.testCase.expect.workflow ?? DEFAULT_LABEL;
    const picked = result.routing.workflow ?? DEFAULT_LABEL;
    labels.add(expected).add(picked);
    const row = counts.get(expected) ?? new Map<string, number>();
    row.set(picked, (row.get(picked) ?? 0) + 1);
    counts.set(expected, row);
  }
  const sorted = [...labels].sort((a, b) => (a === DEFAULT_LABEL ? 1 : b === DEFAULT_LABEL ? -1 : a.localeCompare(b)));
  return { labels: sorted, counts };
}

/** The matrix as a text table: rows expected, columns picked; `·` for 0, off-diagonal counts marked `!`. */
export function matrixLines(matrix: ConfusionMatrix): string[] {
  if (matrix.labels.length === 0) return [];
  const head = 'expected \\ picked';
  const cell = (expected: string, picked: string) => {
    const count = matrix.counts.get(expected)?.get(picked) ?? 0;
    return count === 0 ? '·' : expected === picked ? String(count) : `${count}!`;
  };
  const first = Math.max(head.length, ...matrix.labels.map((name) => name.length));
  const widths = matrix.labels.map((picked) => Math.max(picked.length, ...matrix.labels.map((expected) => cell(expected, picked).length)));
  const row = (name: string, cells: string[]) => [name.padEnd(first), ...cells.map((text, index) => text.padStart(widths[index]!))].join('  ').trimEnd();
  return [
    'Routing (rows: expected, columns: picked; ! = routed elsewhere):',
    row(head, matrix.labels),
    ...matrix.labels
      .filter((expected) => matrix.counts.has(expected))
      .map((expected) =>
        row(
          expected,
          matrix.labels.map((picked) => cell(expected, picked)),
        ),
      ),
  ];
}
