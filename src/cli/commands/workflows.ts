import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Command } from 'commander';
import { WORKFLOW_NAME } from '../../workflows/workflow-name';
import type { WorkflowDocument } from '../../workflows/yaml';
import { DEFAULTS, type HubClient } from '../api-client';
import { connect, type CliContext } from '../context';
import { EXIT, type ExitCode } from '../exit-codes';
import { formatPlan, summary, type PlanMode, type SyncResult } from '../plan';
import type { WorkflowFile } from '../workflow-files';
import { withHubOptions, type HubOptions } from './hub-options';
import { registerWorkflowTest } from './workflows-test';
import type { SyncTestOptions } from '../workflow-tests/sync-gate';

/** `switchboard workflows sync | export | diff`: workflow files ⇄ a hub, through the sync API. */
export function registerWorkflows(program: Command, context: CliContext, setExitCode: (code: ExitCode) => void): void {
  const workflows = program.command('workflows').description('keep a directory of workflow YAML files and a hub in step');

  withHubOptions(workflows.command('sync'))
    .description("create and update the hub's workflows from <dir>/*.yaml (nothing is applied if any file is refused)")
    .argument('<dir>', 'directory of workflow files, one workflow per file')
    .option('--dry-run', 'only print what would change')
    .option('--prune', 'also delete workflows that have no file in <dir>')
    .option('--test', 'first run the test cases of <dir>/tests offline (`workflows test`); sync only when every case passes')
    .option('--junit <file>', 'with --test: also write the test results as JUnit XML')
    .action(async (dir: string, options: HubOptions & SyncTestOptions & { dryRun?: boolean; prune?: boolean }) => {
      if (options.test && !(await (await import('../workflow-tests/sync-gate.js')).gateOnTests(context, dir, options))) return setExitCode(EXIT.REFUSED);
      const files = await readWorkflowDir(dir);
      const client = connect(context, options);
      const prune = options.prune === true;
      // A dry run first, so one refused file stops the whole sync: a half-applied directory is
      // harder to reason about than none (the API itself applies the accepted ones).
      const preview = await sync(client, files, { prune, dryRun: true });
      if (options.dryRun || preview.errors.length > 0) return setExitCode(report(context, preview, files, 'dry-run'));
      setExitCode(report(context, await sync(client, files, { prune, dryRun: false }), files, 'applied'));
    });

  registerWorkflowTest(workflows, context, setExitCode);

  withHubOptions(workflows.command('diff'))
    .description('show what `workflows sync <dir>` would change on the hub (changes nothing)')
    .argument('<dir>', 'directory of workflow files')
    .action(async (dir: string, options: HubOptions) => {
      const files = await readWorkflowDir(dir);
      // prune in the dry run only to learn which workflows exist on the hub alone.
      const preview = await sync(connect(context, options), files, { prune: true, dryRun: true });
      setExitCode(report(context, preview, files, 'diff'));
    });

  withHubOptions(workflows.command('export'))
    .description('write every workflow of the hub to <dir>/<name>.yaml (existing files of the same name are replaced)')
    .argument('<dir>', 'directory to write to (created when missing)')
    .action(async (dir: string, options: HubOptions) => {
      const listed = await listAll(connect(context, options));
      // A name becomes a file name: anything but a workflow slug (`../x`, `/etc/x`, `a/b`) from a
      // hub that is not what it claims to be would write outside <dir>. Refused, never written.
      const all = listed.filter((workflow) => typeof workflow.name === 'string' && WORKFLOW_NAME.test(workflow.name));
      const refused = listed.filter((workflow) => !all.includes(workflow));
      await mkdir(dir, { recursive: true });
      const { renderWorkflowYaml } = await import('../../workflows/yaml.js');
      for (const workflow of all) await writeFile(path.join(dir, `${workflow.name}.yaml`), renderWorkflowYaml(workflow));
      context.out(`Exported ${all.length} workflow(s) to ${dir}${all.length > 0 ? `: ${all.map((workflow) => `${workflow.name}.yaml`).join(', ')}` : ''}.`);
      if (refused.length > 0) {
        for (const workflow of refused)
          context.err(`✗ not written: ${JSON.stringify(String(workflow.name)).slice(0, 80)} is not a workflow name (${WORKFLOW_NAME.source})`);
        setExitCode(EXIT.REFUSED);
      }
    });
}

/**
 * The command tree is built on every start (`--help` included): what only an action needs — YAML,
 * the workflow schemas, the test runner — is loaded by that action, so a command starts quickly.
 */
async function readWorkflowDir(dir: string): Promise<WorkflowFile[]> {
  return (await import('../workflow-files.js')).readWorkflowDir(dir);
}

function sync(client: HubClient, files: readonly WorkflowFile[], options: { prune: boolean; dryRun: boolean }): Promise<SyncResult> {
  return client.post<SyncResult>('/assistant/workflows/sync', {
    workflows: files.map((entry) => entry.workflow),
    prune: options.prune,
    dry_run: options.dryRun,
  });
}

function report(context: CliContext, result: SyncResult, files: readonly WorkflowFile[], mode: PlanMode): ExitCode {
  const { out, err } = formatPlan(
    result,
    files.map((entry) => entry.file),
    mode,
  );
  for (const line of out) context.out(line);
  for (const line of err) context.err(line);
  context.out(summary(result, mode));
  return result.errors.length > 0 ? EXIT.REFUSED : EXIT.OK;
}

/** Every workflow, following `next_cursor` through all pages. */
async function listAll(client: HubClient): Promise<WorkflowDocument[]> {
  const all: WorkflowDocument[] = [];
  let cursor: string | null = null;
  do {
    const query: string = `?limit=${DEFAULTS.pageSize}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
    const page: { items: WorkflowDocument[]; next_cursor: string | null; has_more: boolean } = await client.get(`/assistant/workflows${query}`);
    all.push(...page.items);
    cursor = page.has_more ? page.next_cursor : null;
  } while (cursor);
  return all;
}
