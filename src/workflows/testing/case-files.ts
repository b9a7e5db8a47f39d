import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { isSeq, parseDocument } from 'yaml';
import type { z } from 'zod';
import { CASE_LIMITS, testCaseSchema, type TestCase } from './case-schema';

/** A test file or case that cannot be used; `message` names the file, the case and the field. */
export class CaseFileError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(problems.join('\n'));
    this.name = 'CaseFileError';
  }
}

const TEST_FILE = /\.ya?ml$/i;

/** The test files named by `paths`: a file as given, a directory's `*.yaml` / `*.yml` (not recursive), in name order. */
export async function testFileNames(paths: readonly string[]): Promise<string[]> {
  const files: string[] = [];
  for (const given of paths) {
    const info = await stat(given).catch(() => null);
    if (!info) throw new CaseFileError([`${given}: no such file or directory`]);
    if (info.isFile()) {
      files.push(given);
      continue;
    }
    const entries = await readdir(given, { withFileTypes: true });
    files.push(
      ...entries
        .filter((entry) => entry.isFile() && TEST_FILE.test(entry.name))
        .map((entry) => entry.name)
        .sort()
        .map((name) => path.join(given, name)),
    );
  }
  return [...new Set(files)];
}

/** Reads and validates every case of `files`. Every problem of every file is reported together. */
export async function loadCases(files: readonly string[]): Promise<TestCase[]> {
  const cases: TestCase[] = [];
  const problems: string[] = [];
  for (const file of files) {
    const parsed = parseCaseFile(await readFile(file, 'utf8'), file);
    cases.push(...parsed.cases);
    problems.push(...parsed.problems);
  }
  if (problems.length > 0) throw new CaseFileError(problems);
  return cases;
}

/** The cases of one file's text, and what is wrong with them (each line: `<file>: case <n> "<name>": <field>: <message>`). */
export function parseCaseFile(text: string, file: string): { cases: TestCase[]; problems: string[] } {
  const document = parseDocument(text, { prettyErrors: false, uniqueKeys: true });
  const [error] = document.errors;
  if (error) return { cases: [], problems: [`${file}:${lineOf(text, error.pos[0])}: invalid YAML: ${error.message.split('\n')[0]!.trim()}`] };
  if (document.contents !== null && !isSeq(document.contents)) {
    return { cases: [], problems: [`${file}: not a test file: it must hold a list of cases (- name: …, message: …, expect: …)`] };
  }
  const items = (document.toJS({ maxAliasCount: 0 }) ?? []) as unknown[];
  if (items.length > CASE_LIMITS.maxCasesPerFile)
    return { cases: [], problems: [`${file}: ${items.length} cases; at most ${CASE_LIMITS.maxCasesPerFile} per file`] };
  const cases: TestCase[] = [];
  const problems: string[] = [];
  const names = new Set<string>();
  for (const [position, item] of items.entries()) {
    const index = position + 1;
    const label = caseLabel(index, item);
    const result = testCaseSchema.safeParse(item);
    if (!result.success) {
      problems.push(...issueLines(result.error.issues).map((line) => `${file}: ${label}: ${line}`));
      continue;
    }
    if (names.has(result.data.name)) {
      problems.push(`${file}: ${label}: name: another case of this file has the same name`);
      continue;
    }
    names.add(result.data.name);
    cases.push({ ...result.data, file, index, id: `${file}#${result.data.name}` });
  }
  return { cases, problems };
}

function caseLabel(index: number, item: unknown): string {
  const name = typeof item === 'object' && item !== null && typeof (item as { name?: unknown }).name === 'string' ? (item as { name: string }).name : null;
  return name ? `case ${index} "${name.slice(0, 80)}"` : `case ${index}`;
}

function issueLines(issues: readonly z.core.$ZodIssue[]): string[] {
  return issues.map((issue) => {
    const field = issue.path.length > 0 ? issue.path.map(String).join('.') : '(the case)';
    if (issue.code === 'unrecognized_keys')
      return `${field === '(the case)' ? '' : `${field}: `}unknown field ${issue.keys.map((key) => `"${key}"`).join(', ')}`;
    if (issue.code === 'invalid_union' && issue.path[0] === 'model') return `${field}: a step is {tool: <name>, input?: {...}} or {say: <text>}`;
    return `${field}: ${issue.message}`;
  });
}

function lineOf(text: string, offset: number): number {
  return text.slice(0, offset).split('\n').length;
}
