import { Option, type Command } from 'commander';
import { TURN_MODES, type TurnMode } from '../../protocol/frames';
import { chooseSession } from '../chat/choose-session';
import { InteractiveChat } from '../chat/interactive-chat';
import { runScriptedChat } from '../chat/scripted-chat';
import { connect, type CliContext } from '../context';
import { CliError, type ExitCode } from '../exit-codes';
import { readAll } from '../prompt';
import { jsonOption, withHubOptions, type HubOptions } from './hub-options';

interface ChatOptions extends HubOptions {
  session?: string;
  new?: boolean;
  name?: string;
  workflow?: string;
  mode: TurnMode;
  message?: string;
  yes?: boolean;
  deny?: boolean;
  json?: boolean;
}

/**
 * `switchboard chat`: talk to the agent. On a terminal: a prompt, the answer streamed under it with a
 * status line, confirmations answered with one key. With `--message` or a piped stdin: one message,
 * the answer on stdout, for scripts.
 */
export function registerChat(program: Command, context: CliContext, setExitCode: (code: ExitCode) => void): void {
  withHubOptions(program.command('chat'))
    .description('chat with the agent: streamed answers, tool confirmations with one key (y/n/a/d/f/c); one message per run with --message or a piped stdin')
    .addOption(
      new Option('--session <id>', 'continue this session (its id, or the first characters of it); default: your most recent web session').conflicts('new'),
    )
    .option('--new', 'start a new session')
    .option('--name <name>', 'name of the new session (with --new)')
    .option('--workflow <name>', 'send every message to this workflow (skips trigger routing)')
    .addOption(
      new Option('--mode <mode>', 'how the agent works: normal, think (analyse, research, reason) or delegate (parallel sub-tasks); /mode switches in the chat')
        .choices(TURN_MODES)
        .default('normal'),
    )
    .option('-m, --message <text>', 'send this one message, print the answer as plain text and exit (without it, a piped stdin is the message)')
    .addOption(new Option('--yes', 'with --message or piped stdin: allow every tool that asks for confirmation').conflicts('deny'))
    .option('--deny', 'with --message or piped stdin: deny every tool that asks for confirmation')
    .addOption(jsonOption('with --message or piped stdin: print the `done` payload (text, tokens, tool calls) as one JSON object'))
    .action(async (options: ChatOptions) => {
      const scripted = options.message !== undefined || context.stdin.isTTY !== true;
      if (!scripted && (options.yes || options.deny || options.json)) {
        throw new CliError('--yes, --deny and --json are for one-message runs (--message, or a piped stdin); in a chat, answer each confirmation with a key.');
      }
      const text = scripted ? (options.message ?? (await readAll(context.stdin))) : null;
      if (text !== null && text.trim() === '') throw new CliError('Nothing to send: the message is empty (give --message "…" or pipe the text on stdin).');
      const client = connect(context, options);
      const { session, resumed } = await chooseSession(client, options);
      const workflow = options.workflow ?? null;
      if (text === null) {
        setExitCode(await new InteractiveChat({ client, session, resumed, mode: options.mode, workflow, context }).run());
        return;
      }
      const autoAnswer = options.yes ? 'allow' : options.deny ? 'deny' : null;
      setExitCode(await runScriptedChat({ client, session, text, mode: options.mode, workflow, autoAnswer, json: options.json === true, context }));
    });
}
