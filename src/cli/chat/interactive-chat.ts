import { clearLine, createInterface, cursorTo } from 'node:readline';
import type { Colors } from 'picocolors/types';
import { TURN_MODES, WORKING_STATES, type TurnMode } from '../../protocol/frames';
import type { HubClient } from '../api-client';
import type { CliContext } from '../context';
import { CliError, EXIT, type ExitCode } from '../exit-codes';
import type { SessionView } from '../../protocol/payloads';
import { RECONNECT_DEFAULTS } from '../socket/reconnect-policy';
import { KeyInput } from '../terminal/key-input';
import { PlainScreen, TerminalScreen, type Screen } from '../terminal/screen';
import { sanitize } from '../terminal/text';
import { ChatConnection } from './chat-connection';
import { InteractiveTurn, type TurnOutcome } from './interactive-turn';
import { PROMPT_HISTORY_SIZE, PromptHistory } from './prompt-history';

export interface InteractiveChatOptions {
  client: HubClient;
  session: SessionView;
  resumed: boolean;
  mode: TurnMode;
  workflow: string | null;
  context: CliContext;
}

const HINT =
  "Type a message and press Enter. /help lists the hub's commands; /mode normal|think|delegate switches mode; Ctrl-C cancels a running turn; Ctrl-D or /quit leaves.";

/**
 * `switchboard chat` on a terminal: a prompt with line editing and history; each message's turn
 * streams under it (InteractiveTurn); slash commands go to the hub, except `/mode` and `/quit`.
 */
export class InteractiveChat {
  private mode: TurnMode;
  private readonly colors: Colors;
  private readonly screen: Screen;
  private readonly keys: KeyInput;
  private readonly connection: ChatConnection;
  private readonly promptHistory: PromptHistory;
  private history: string[] = [];
  private turn: InteractiveTurn | null = null;
  private lost: CliError | null = null;
  /** Interrupts whatever waits for the user when the connection is gone for good. */
  private interruptPrompt: (() => void) | null = null;

  constructor(private readonly options: InteractiveChatOptions) {
    const { context } = options;
    this.mode = options.mode;
    this.colors = context.colors;
    this.screen = context.stdout.isTTY ? new TerminalScreen(context.stdout) : new PlainScreen(context.stdout);
    this.keys = new KeyInput(context.stdin);
    this.promptHistory = new PromptHistory(context.configDir);
    this.connection = new ChatConnection(options.client, options.session.id, {
      onFrame: (frame) => this.turn?.follower.handle(frame),
      onReady: ({ outage }) => {
        if (this.turn) {
          this.turn.reconnecting = null;
          this.turn.follower.resumed(outage);
        } else this.note(this.colors.green('✓ connected again'));
      },
      onRetry: ({ attempt, delayMs, why }) => {
        const note = { attempt, maxAttempts: RECONNECT_DEFAULTS.maxFailures, at: Date.now() + delayMs, why };
        if (this.turn) this.turn.reconnecting = note;
        else this.note(this.colors.yellow(reconnectLine(attempt, note.maxAttempts, delayMs, why)));
      },
      onStop: (error) => {
        this.lost = error;
        if (this.turn) this.turn.abort({ kind: 'lost', error });
        this.interruptPrompt?.();
      },
    });
  }

  async run(): Promise<ExitCode> {
    const { session, resumed, client } = this.options;
    this.history = await this.promptHistory.load();
    const state = await this.connection.open();
    const { out } = this.options.context;
    out(
      `${this.colors.bold('Switchboard')} ${client.hubUrl} · session ${session.id} ${this.colors.dim(`"${sanitize(session.name)}"${resumed ? ' (resumed; --new starts a fresh one)' : ''}`)}`,
    );
    out(this.colors.dim(HINT));
    const restoreSignals = this.trapSignals();
    try {
      if (WORKING_STATES.has(state)) {
        out(this.colors.dim('A turn is running in this session: following it (its answer is shown when it ends).'));
        await this.runTurn(null);
      }
      while (!this.lost) {
        const line = await this.prompt();
        if (line === null) break;
        const text = line.trim();
        if (text === '') continue;
        if (text === '/quit' || text === '/exit') break;
        if (text === '/mode' || text.startsWith('/mode ')) {
          this.switchMode(text.slice('/mode'.length).trim());
          continue;
        }
        if ((await this.runTurn(line)) === 'quit') break;
      }
    } finally {
      restoreSignals();
      this.connection.close();
      await this.promptHistory.save(this.history);
    }
    if (this.lost) throw this.lost;
    return EXIT.OK;
  }

  /** Runs one turn: `text` sent as a message, or (null) the turn already running when we joined. */
  private async runTurn(text: string | null): Promise<'quit' | 'ended'> {
    const turn = new InteractiveTurn(
      { screen: this.screen, keys: this.keys, colors: this.colors, connection: this.connection, client: this.options.client },
      { joined: text === null },
    );
    this.turn = turn;
    turn.start();
    if (text !== null) {
      this.connection.send(text, this.mode, this.options.workflow).then(
        (message) => (turn.follower.turnId = message.id),
        (error: unknown) => turn.abort({ kind: 'refused', error: error instanceof CliError ? error : new CliError(String(error)) }),
      );
    }
    const outcome: TurnOutcome = await turn.outcome;
    await turn.finish(outcome);
    this.turn = null;
    if (outcome.kind === 'quit') void this.connection.cancel();
    return outcome.kind === 'quit' ? 'quit' : 'ended';
  }

  /** One line from the prompt (null: the user quit), with editing and history (readline). */
  private prompt(): Promise<string | null> {
    const { stdin, stdout } = this.options.context;
    const label = this.mode === 'normal' ? '› ' : `${this.mode} › `;
    const lines = createInterface({
      input: stdin,
      output: stdout,
      terminal: true,
      history: this.history,
      historySize: PROMPT_HISTORY_SIZE,
      removeHistoryDuplicates: true,
      prompt: this.colors.cyan(this.colors.bold(label)),
    });
    this.readline = lines;
    return new Promise((resolve) => {
      let answer: string | null = null;
      const finish = () => {
        if (answer === null) stdout.write('\n'); // quitting: the shell's prompt starts on a line of its own
        this.readline = null;
        this.interruptPrompt = null;
        resolve(answer);
      };
      lines.on('history', (history: string[]) => (this.history = history));
      lines.on('line', (line) => {
        answer = line;
        lines.close();
      });
      // Ctrl-C clears a line being typed; on an empty line it quits, like Ctrl-D.
      lines.on('SIGINT', () => {
        if (lines.line.length === 0) return lines.close();
        lines.write(null, { ctrl: true, name: 'e' });
        lines.write(null, { ctrl: true, name: 'u' });
      });
      lines.on('close', finish);
      this.interruptPrompt = () => lines.close();
      lines.prompt();
    });
  }

  private readline: ReturnType<typeof createInterface> | null = null;

  /** A line above the prompt (connection news while idle), keeping what is being typed. */
  private note(text: string): void {
    const { stdout } = this.options.context;
    if (!this.readline) return this.options.context.out(text);
    clearLine(stdout, 0);
    cursorTo(stdout, 0);
    stdout.write(`${text}\n`);
    this.readline.prompt(true);
  }

  private switchMode(wanted: string): void {
    if (wanted === '') return this.options.context.out(`Mode: ${this.mode} (/mode normal|think|delegate)`);
    if (!(TURN_MODES as readonly string[]).includes(wanted))
      return this.options.context.out(this.colors.yellow(`Unknown mode "${sanitize(wanted)}": normal, think or delegate.`));
    this.mode = wanted as TurnMode;
    this.options.context.out(this.colors.dim(`Mode: ${this.mode} (for the next messages)`));
  }

  /**
   * Outside raw mode a signal would end the process with the terminal's scroll region still set:
   * leave through the normal path instead.
   */
  private trapSignals(): () => void {
    const onSignal = (signal: NodeJS.Signals) => {
      this.turn?.abort({ kind: 'quit' });
      this.interruptPrompt?.();
      if (signal !== 'SIGINT') process.exitCode = 128 + (signal === 'SIGTERM' ? 15 : 1);
    };
    const signals: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];
    for (const signal of signals) process.on(signal, onSignal);
    return () => {
      for (const signal of signals) process.off(signal, onSignal);
    };
  }
}

/** `↻ connection lost (server shutting down); reconnecting…`, then one line per further attempt. */
function reconnectLine(attempt: number, maxAttempts: number, delayMs: number, why: string): string {
  const when = delayMs > 0 ? `in ${Math.round(delayMs / 1000)} s` : 'now';
  if (attempt === 1) return `↻ connection lost (${sanitize(why)}); reconnecting ${when}`;
  return `↻ attempt ${attempt - 1} failed (${sanitize(why)}); next ${when} (${attempt} of ${maxAttempts})`;
}
