#!/usr/bin/env node
import os from 'node:os';
import path from 'node:path';
import { Command, CommanderError } from 'commander';
import { VERSION } from '../version';
import { registerLogin } from './commands/login';
import { registerWorkflows } from './commands/workflows';
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

/** Runs the CLI and resolves with its exit status; every failure is one line on stderr, never a stack. */
export async function run(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<ExitCode> {
  const context: CliContext = {
    configDir: configDir(env),
    apiKey: env.SWITCHBOARD_API_KEY || null,
    stdin: process.stdin,
    out: (line) => process.stdout.write(`${line}\n`),
    err: (line) => process.stderr.write(`${line}\n`),
  };
  let exitCode: ExitCode = EXIT.OK;
  const program = new Command('switchboard')
    .description('Switchboard command line: log in to a hub, sync workflow YAML files')
    .version(VERSION)
    // Commander exits 1 on usage errors by itself; 1 means "refused" here, so it throws instead.
    .exitOverride()
    .showHelpAfterError('(run with --help for usage)');
  registerLogin(program, context);
  registerWorkflows(program, context, (code) => {
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

if (require.main === module) {
  void run(process.argv.slice(2)).then((code) => {
    process.exitCode = code;
  });
}
