import type { CaseResult } from './runner';

/**
 * The results as JUnit XML (the `testsuites` shape GitLab, Jenkins, GitHub test reporters and
 * Azure read): one `testsuite` per test file, one `testcase` per case, a `failure` with every
 * failed expectation. Times in seconds.
 */
export function junitXml(results: readonly CaseResult[], suiteName = 'switchboard workflows test'): string {
  const byFile = new Map<string, CaseResult[]>();
  for (const result of results) byFile.set(result.testCase.file, [...(byFile.get(result.testCase.file) ?? []), result]);
  const failedOf = (list: readonly CaseResult[]) => list.filter((result) => result.failures.length > 0).length;
  const seconds = (list: readonly CaseResult[]) => (list.reduce((sum, result) => sum + result.durationMs, 0) / 1000).toFixed(3);
  const lines = ['<?xml version="1.0" encoding="UTF-8"?>'];
  lines.push(`<testsuites name="${attribute(suiteName)}" tests="${results.length}" failures="${failedOf(results)}" errors="0" time="${seconds(results)}">`);
  for (const [file, list] of byFile) {
    lines.push(`  <testsuite name="${attribute(file)}" tests="${list.length}" failures="${failedOf(list)}" errors="0" skipped="0" time="${seconds(list)}">`);
    for (const result of list) {
      const open = `    <testcase name="${attribute(result.testCase.name)}" classname="${attribute(file)}" time="${(result.durationMs / 1000).toFixed(3)}"`;
      if (result.failures.length === 0) {
        lines.push(`${open}/>`);
        continue;
      }
      lines.push(`${open}>`);
      lines.push(`      <failure message="${attribute(result.failures[0]!)}" type="expectation">${text(result.failures.join('\n'))}</failure>`);
      lines.push('    </testcase>');
    }
    lines.push('  </testsuite>');
  }
  lines.push('</testsuites>');
  return `${lines.join('\n')}\n`;
}

// XML 1.0 cannot carry most control characters at all, even escaped: they are replaced.
const NOT_XML = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;

function text(value: string): string {
  return value.replace(NOT_XML, '\uFFFD').replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function attribute(value: string): string {
  return text(value).replace(/"/g, '&quot;').replace(/\n/g, '&#10;').replace(/\r/g, '&#13;').replace(/\t/g, '&#9;');
}
