import { Option, type Command } from 'commander';
import { STREAM_LEVELS as LEVELS, type LogLine } from '../../protocol/log-lines';
import type { Colors } from 'picocolors/types';
import { connect, type CliContext } from '../context';
import { CliError, EXIT, type ExitCode } from '../exit-codes';
import { HubSocket } from '../socket/hub-socket';
import { sanitize } from '../terminal/text';
import { jsonOption, withHubOptions, type HubOptions } from './hub-options';

/** `switchboard logs`: the hub's live log stream (admins), one coloured line per entry, until Ctrl-C. */
export function registerLogs(program: Command, context: CliContext, setExitCode: (code: ExitCode) => void): void {
  withHubOptions(program.command('logs'))
    .description("stream the hub's live logs (admins only), coloured by level, until Ctrl-C")
    .addOption(
      new Option('--level <level>', 'lowest level to show')
        .choices(LEVELS)
        .default('INFO')
        .argParser((value) => value.toUpperCase()),
    )
    .addOption(jsonOption('print each log line as the JSON object the hub sends, one per line'))
    .action(async (options: HubOptions & { level: string; json?: boolean }) => {
      if (!(LEVELS as readonly string[]).includes(options.level)) throw new CliError(`--level must be one of ${LEVELS.join(', ')}.`);
      const client = connect(context, options);
      const format = options.json ? (line: LogLine) => JSON.stringify(line) : (line: LogLine) => formatLogLine(line, context.colors);
      setExitCode(await streamLogs(context, client, options.level, format));
    });
}

function streamLogs(context: CliContext, client: ReturnType<typeof connect>, level: string, format: (line: LogLine) => string): Promise<ExitCode> {
  return new Promise((resolve, reject) => {
    const socket = new HubSocket({
      client,
      url: () => client.socketUrl(`/ws/v1/logs?level=${level}`),
      keepaliveText: 'ping', // the log stream's keepalive is plain text (spec)
      readyOn: 'open',
      wording: { forbidden: 'the log stream is for admins, and this account is not one', notFound: 'no log stream here' },
      listener: {
        onMessage: (text) => {
          let line: LogLine;
          try {
            line = JSON.parse(text) as LogLine;
          } catch {
            return;
          }
          if (line.type === 'log_line') context.out(format(line));
        },
        onReady: ({ reconnected }) =>
          context.err(context.colors.dim(reconnected ? 'Connected again.' : `Streaming ${client.hubUrl} logs at ${level} and above; Ctrl-C stops.`)),
        onRetry: ({ attempt, delayMs, why }) =>
          context.err(
            context.colors.yellow(`Connection lost (${why}); reconnecting${delayMs > 0 ? ` in ${Math.round(delayMs / 1000)} s` : ''} (attempt ${attempt}).`),
          ),
        onStop: (error) => {
          process.off('SIGINT', stop);
          reject(error);
        },
      },
    });
    const stop = () => {
      process.off('SIGINT', stop);
      socket.close();
      resolve(EXIT.OK);
    };
    process.on('SIGINT', stop);
    socket.start();
  });
}

/** `14:03:12.345 INFO    api:1234  message`, the level coloured; errors stand out whole. */
export function formatLogLine(line: LogLine, c: Colors): string {
  const time = /T(\d\d:\d\d:\d\d(?:\.\d+)?)/.exec(line.timestamp)?.[1] ?? line.timestamp;
  const levelColour: Record<string, (text: string) => string> = { DEBUG: c.dim, INFO: c.cyan, WARNING: c.yellow, ERROR: (text) => c.red(c.bold(text)) };
  const colour = levelColour[line.level] ?? ((text: string) => text);
  const message = sanitize(line.message);
  return `${c.dim(time)} ${colour(line.level.padEnd(7))} ${c.dim(sanitize(line.logger))}  ${line.level === 'ERROR' ? c.red(message) : message}`;
}
