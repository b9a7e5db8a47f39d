#!/usr/bin/env node
import os from 'node:os';
import path from 'node:path';
import { Command, CommanderError } from 'commander';
import pc from 'picocolors';
import { VERSION } from '../version';
import { registerApprovals } from './commands/approvals';
import { registerIdentities } from './commands/identities';
import { registerChannels } from './commands/channels';
import { registerChat } from './commands/chat';
import { registerHistory } from './commands/history';
import { registerKeys } from './commands/keys';
import { registerLogin } from './commands/login';
import { registerLogs } from './commands/logs';
import { registerMcp } from './commands/mcp';
import { registerSessions } from './commands/sessions';
import { registerWhoami } from './commands/whoami';
import { registerWorkflows } from './commands/workflows';
import { registerEvents } from './commands/events';
import type { CliContext } from './context';
import { CliError, EXIT, type ExitCode } from './exit-codes';

/**
 * Where credentials live: $SWITCHBOARD_CONFIG_DIR, else $XDG_CONFIG_HOME/switchboard, else
 * ~/.config/switchboard.
 */
function configDir(env: NodeJS.ProcessEnv): string {
  if (env.SWITCHBOARD_CONFIG_DIR) return env.SWITCHBOARD_CONFIG_DIR;
  return path.join(env.XDG_CONFIG_HOME || path.join(os.homedir(), '.config'), 'switchboard');
}

/**
 * The whole command tree. Also what the documentation site reads to generate the CLI reference,
 * so every command and option carries its description here.
 */
export function createProgram(context: CliContext, setExitCode: (code: ExitCode) => void): Command {
  const program = new Command('switchboard')
    .description('Switchboard command line: chat with the agent, manage sessions and API keys, follow the logs, sync workflow YAML files')
    .version(VERSION)
    // Commander exits 1 on usage errors by itself; 1 means "refused" here, so it throws instead.
    .exitOverride()
    .showHelpAfterError('(run with --help for usage)');
  registerLogin(program, context);
  registerWhoami(program, context);
  registerChat(program, context, setExitCode);
  registerSessions(program, context);
  registerHistory(program, context);
  registerKeys(program, context);
  registerLogs(program, context, setExitCode);
  registerWorkflows(program, context, setExitCode);
  registerMcp(program, context);
  registerApprovals(program, context);
  registerIdentities(program, context);
  registerChannels(program, context, setExitCode);
  registerEvents(program, context);
  return program;
}

/** Runs the CLI and resolves with its exit status; every failure is one line on stderr, never a stack. */
export async function run(
  argv: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
  extensions: Pick<CliContext, 'workflowTests'> = {},
): Promise<ExitCode> {
  const context: CliContext = {
    ...extensions,
    env,
    configDir: configDir(env),
    stdin: process.stdin,
    stdout: process.stdout,
    colors: pc.createColors(!env.NO_COLOR && (Boolean(env.FORCE_COLOR) || process.stdout.isTTY === true)),
    out: (line) => process.stdout.write(`${line}\n`),
    err: (line) => process.stderr.write(`${line}\n`),
  };
  let exitCode: ExitCode = EXIT.OK;
  const program = createProgram(context, (code) => {
    exitCode = code;
  });
  try {
    await program.parseAsync(argv, { from: 'user' });
    return exitCode;
  } catch (error) {
    if (error instanceof CommanderError) {
      // --help and --version end with a "CommanderError" too, with exit code 0.
      return error.exitCode === 0 ? EXIT.OK : EXIT.FAILED;
    }
    if (error instanceof CliError) {
      context.err(error.message);
      return error.exitCode;
    }
    context.err(`switchboard: unexpected error: ${error instanceof Error ? error.message : String(error)}`);
    return EXIT.FAILED;
  }
}

// The `switchboard` entry is src/compose/cli.ts (it adds the offline test hub); this one runs the
// rest of the CLI for a build that has no composition root.
if (require.main === module) {
  void run(process.argv.slice(2)).then((code) => {
    process.exitCode = code;
  });
}
