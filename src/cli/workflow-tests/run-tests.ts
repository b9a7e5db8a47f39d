import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { CaseFileError, loadCases, testFileNames } from '../../workflows/testing/case-files';
import { junitXml } from '../../workflows/testing/junit';
import { WorkflowsRefusedError, type CaseModelChoice, type LocalTargetOptions } from '../../workflows/testing/local-target';
import { caseLines, confusionMatrix, matrixLines, summaryLine } from '../../workflows/testing/report';
import { runCases } from '../../workflows/testing/runner';
import type { CaseTarget } from '../../workflows/testing/target';
import { TapeError } from '../../workflows/testing/model-tapes';
import type { CliContext } from '../context';
import { CliError, EXIT, type ExitCode } from '../exit-codes';
import { readWorkflowDir } from '../workflow-files';

/** Where the cases run: offline (a hub composed in this process) or a live hub. */
export type TestTargetChoice = { kind: 'local'; model: CaseModelChoice; configFile?: string } | { kind: 'remote'; start: () => Promise<CaseTarget> };

export interface TestRunOptions {
  /** The workflow files' directory (offline: synced into the test hub). */
  workflowsDir: string;
  /** Test files or directories; default `<workflowsDir>/tests`. */
  paths: readonly string[];
  junit?: string;
  target: TestTargetChoice;
  env: Record<string, string | undefined>;
}

/**
 * `switchboard workflows test`: loads the cases, runs them, prints one line per case, the routing
 * matrix and a summary, writes JUnit XML when asked. Resolves with the exit status: 0 all passed,
 * 1 a case failed or a file is invalid.
 */
export async function runWorkflowTests(context: CliContext, options: TestRunOptions): Promise<ExitCode> {
  const started = performance.now();
  const paths = options.paths.length > 0 ? options.paths : [path.join(options.workflowsDir, 'tests')];
  const cases = await casesOf(paths);
  if (cases.length === 0) throw new CliError(`No test cases in ${paths.join(', ')}.`, EXIT.REFUSED);
  const target = await startTarget(context, options);
  let results;
  try {
    context.out(`Running ${cases.length} case(s) ${target.description}`);
    results = await runCases(cases, target, (result) => caseLines(result).forEach((line) => context.out(line)));
  } finally {
    await target.close();
  }
  const matrix = matrixLines(confusionMatrix(results));
  if (matrix.length > 0) context.out(['', ...matrix, ''].join('\n'));
  context.out(summaryLine(results, Math.round(performance.now() - started)));
  if (options.junit) {
    await writeFile(options.junit, junitXml(results));
    context.out(`JUnit XML written to ${options.junit}`);
  }
  return results.some((result) => result.failures.length > 0) ? EXIT.REFUSED : EXIT.OK;
}

async function casesOf(paths: readonly string[]) {
  try {
    return await loadCases(await testFileNames(paths));
  } catch (error) {
    if (!(error instanceof CaseFileError)) throw error;
    throw new CliError(`${error.problems.map((problem) => `✗ ${problem}`).join('\n')}\nThe test files are invalid; no case was run.`, EXIT.REFUSED);
  }
}

async function startTarget(context: CliContext, options: TestRunOptions): Promise<CaseTarget> {
  const { target } = options;
  if (target.kind === 'remote') return target.start();
  if (!context.workflowTests)
    throw new CliError('This build of the CLI cannot run workflow tests offline (start it as `switchboard`, dist/src/compose/cli.js).');
  const local: LocalTargetOptions = {
    workflows: await readWorkflowDir(options.workflowsDir),
    model: target.model,
    configFile: target.configFile,
    env: options.env,
  };
  try {
    return await context.workflowTests.startLocal(local);
  } catch (error) {
    // A missing recording, or workflows the test hub refused (named per file, like `workflows sync` does).
    if (error instanceof TapeError || error instanceof WorkflowsRefusedError) throw new CliError(error.message, EXIT.REFUSED);
    throw error;
  }
}
