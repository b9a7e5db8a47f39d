import { Option, type Command } from 'commander';
import type { CaseModelChoice } from '../../workflows/testing/local-target';
import { connect, type CliContext } from '../context';
import { CliError, type ExitCode } from '../exit-codes';
import type { TestTargetChoice } from '../workflow-tests/run-tests';
import { apiKeyOption } from './hub-options';

export interface WorkflowTestOptions {
  workflows: string;
  junit?: string;
  against?: string;
  apiKey?: string;
  model?: CaseModelChoice;
  config?: string;
}

/** `--model record|replay FILE`. */
function modelChoice(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

/** The options `workflows test` and `workflows sync --test` share. */
export function withTestOptions(command: Command): Command {
  return command
    .option('--workflows <dir>', 'the workflow files the cases run against (offline)', 'workflows')
    .option('--junit <file>', 'also write the results as JUnit XML, for CI systems')
    .option('--against <url>', 'run on a live hub instead (routing cases: POST /assistant/routing/test; whole cases: a session, with its real model)')
    .addOption(apiKeyOption())
    .addOption(
      new Option('--model <mode-and-file...>', "offline: `record FILE` (the configured model's answers, SERVICE_LLM_*) or `replay FILE`").argParser(
        modelChoice,
      ),
    )
    .option('--config <file>', 'offline: the hub config.yaml to run with (tool settings); default: the built-in defaults');
}

/** Turns `--model record FILE` into a choice, or refuses it. */
export function parseModel(values: string[] | undefined): CaseModelChoice {
  if (!values) return { kind: 'scripted' };
  const [mode, file, ...rest] = values;
  if ((mode !== 'record' && mode !== 'replay') || !file || rest.length > 0) throw new CliError('--model takes `record FILE` or `replay FILE`.');
  return { kind: mode, file };
}

/** Where `options` say the cases run. */
export function testTarget(context: CliContext, options: Omit<WorkflowTestOptions, 'model'> & { model?: string[] }): TestTargetChoice {
  const model = parseModel(options.model);
  if (!options.against) return { kind: 'local', model, configFile: options.config };
  if (model.kind !== 'scripted') throw new CliError('--model records or replays offline runs only; --against uses the hub’s own model.');
  const client = connect(context, { url: options.against, apiKey: options.apiKey });
  return { kind: 'remote', start: async () => (await import('../workflow-tests/remote-target.js')).RemoteTarget.start(client, options.against!) };
}

/** `switchboard workflows test [paths...]`. */
export function registerWorkflowTest(workflows: Command, context: CliContext, setExitCode: (code: ExitCode) => void): void {
  withTestOptions(workflows.command('test'))
    .description('run the workflow test cases (<workflows>/tests/*.yaml): routing, tool calls and answers, offline by default')
    .argument('[paths...]', 'test files or directories (default: <workflows>/tests)')
    .action(async (paths: string[], options: Omit<WorkflowTestOptions, 'model'> & { model?: string[] }) => {
      const target = testTarget(context, options);
      const { runWorkflowTests } = await import('../workflow-tests/run-tests.js');
      setExitCode(await runWorkflowTests(context, { workflowsDir: options.workflows, paths, junit: options.junit, target, env: context.env ?? {} }));
    });
}
