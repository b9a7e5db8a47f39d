import type { Colors } from 'picocolors/types';
import type { HubClient } from '../api-client';
import { CliError } from '../exit-codes';
import { fullHistory, replyOfTurn } from '../sessions-lookup';
import { actionForKey, confirmQuestion, describeAction, formatConfirmRequest } from './confirm-prompt';
import { isCtrl, type KeyInput, type KeyPress } from '../terminal/key-input';
import type { Screen } from '../terminal/screen';
import { sanitize } from '../terminal/text';
import type { ChatConnection } from './chat-connection';
import { TurnFollower, type ConfirmRequest, type TurnEnd, type TurnError, type TurnSnapshot, type TurnView } from './turn-follower';
import { formatDoneSummary, formatTurnStatus, type ConnectionNote } from './turn-status';

/** How often the status line's spinner and clocks move. */
const STATUS_TICK_MS = 120;

export type TurnOutcome = TurnEnd | { kind: 'quit' } | { kind: 'lost'; error: CliError } | { kind: 'refused'; error: CliError };

export interface InteractiveTurnDeps {
  screen: Screen;
  keys: KeyInput;
  colors: Colors;
  connection: ChatConnection;
  client: HubClient;
}

/**
 * One turn on the terminal: streams the answer above the status line, asks confirmations with one
 * key the moment they arrive, turns Ctrl-C into `cancel` (twice: quit), and prints how it ended.
 */
export class InteractiveTurn implements TurnView {
  readonly follower: TurnFollower;
  readonly outcome: Promise<TurnOutcome>;
  /** Set by the chat while the socket reconnects. */
  reconnecting: ConnectionNote | null = null;
  private settle!: (outcome: TurnOutcome) => void;
  private confirming: ConfirmRequest | null = null;
  /** The approval progress last printed (each change once). */
  private progressShown = '';
  private cancelling = false;
  private frame = 0;
  private timer: NodeJS.Timeout | null = null;
  /** What `report` says after an end out of sight (set by `fillFromHistory`). */
  private unseenNote = '';

  constructor(
    private readonly deps: InteractiveTurnDeps,
    options: { joined?: boolean } = {},
  ) {
    this.outcome = new Promise((resolve) => (this.settle = resolve));
    this.follower = new TurnFollower(this, options);
  }

  start(): void {
    this.deps.screen.start();
    this.deps.keys.start((key) => this.onKey(key));
    this.timer = setInterval(() => {
      this.frame += 1;
      this.drawStatus();
    }, STATUS_TICK_MS);
    this.drawStatus();
  }

  /** Ends the turn from outside (the connection is gone, the message was refused). */
  abort(outcome: TurnOutcome): void {
    this.follower.dispose();
    this.settle(outcome);
  }

  // TurnView

  text(text: string, restated: boolean): void {
    this.dismissConfirmation();
    if (restated) this.line(this.deps.colors.dim('(the answer changed when the hub restarted the turn; here it is in full)'));
    this.deps.screen.write(sanitize(text));
  }

  changed(): void {
    this.drawStatus();
  }

  confirm(request: ConfirmRequest): void {
    // The hub asks again after a reconnect while the question is still on screen: keep it.
    if (this.confirming?.confirmation_id === request.confirmation_id) return;
    this.dismissConfirmation();
    this.confirming = request;
    this.newLine();
    for (const line of formatConfirmRequest(request, this.deps.screen.columns, this.deps.colors)) this.deps.screen.write(`${line}\n`);
    this.deps.screen.write(confirmQuestion(this.deps.colors, this.deps.screen.columns));
    this.drawStatus();
  }

  progress(request: ConfirmRequest): void {
    // Still asking: the question stays and takes the news; answered: one line, the prompt does not come back.
    if (this.confirming?.confirmation_id === request.confirmation_id) this.confirming = request;
    const { approval } = request;
    if (!approval || approval.text === this.progressShown) return;
    this.progressShown = approval.text;
    const by = approval.approved_by.length > 0 ? ` (approved by ${approval.approved_by.join(', ')})` : '';
    this.line(this.deps.colors.dim(`… ${sanitize(approval.text)}${sanitize(by)}`));
    if (this.confirming) this.deps.screen.write(confirmQuestion(this.deps.colors, this.deps.screen.columns));
  }

  notice(error: TurnError): void {
    this.line(this.deps.colors.yellow(`! ${sanitize(error.code)}: ${sanitize(error.message)}`));
  }

  ended(end: TurnEnd): void {
    this.settle(end);
  }

  /** Puts the terminal back for the prompt and prints how the turn ended. */
  async finish(outcome: TurnOutcome): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.deps.keys.stop();
    this.dismissConfirmation();
    if (outcome.kind === 'ended-unseen') await this.fillFromHistory();
    this.newLine();
    this.deps.screen.stop();
    for (const line of this.report(outcome)) this.deps.screen.write(`${line}\n`);
    this.deps.screen.write('\n');
  }

  private report(outcome: TurnOutcome): string[] {
    const { colors } = this.deps;
    const failures = (errors: TurnError[]) => errors.map((error) => colors.red(`✗ ${sanitize(error.code)}: ${sanitize(error.message)}`));
    switch (outcome.kind) {
      case 'done':
        return [...failures(outcome.errors), colors.dim(formatDoneSummary(outcome.done, this.follower.snapshot))];
      case 'cancelled':
      case 'failed':
        return failures(outcome.errors);
      case 'ended-unseen':
        return [colors.dim(this.unseenNote)];
      case 'quit':
        return [colors.dim('Quit while the turn was running.')];
      case 'lost':
        return []; // the chat ends with this error on stderr
      case 'refused':
        return [colors.red(`✗ ${outcome.error.message}`)];
    }
  }

  /** The turn ended while the connection was down: its stored reply completes the answer. */
  private async fillFromHistory(): Promise<void> {
    const turnId = this.follower.turnId;
    try {
      const reply = turnId ? replyOfTurn(await fullHistory(this.deps.client, this.deps.connection.sessionId), turnId) : null;
      if (!reply) {
        this.unseenNote = 'The turn ended while the connection was down and left no answer (cancelled or failed); `switchboard history` shows the session.';
        return;
      }
      const { text, restated } = this.follower.transcript.finish(reply.content);
      if (text) this.text(text, restated);
      this.unseenNote = '✓ done (the hub finished the turn while the connection was down; the answer above is the stored one)';
    } catch (error) {
      this.unseenNote = `The turn ended while the connection was down; its answer could not be fetched: ${error instanceof Error ? error.message : String(error)}`;
    }
  }

  private onKey(key: KeyPress): void {
    if (this.confirming) return this.answer(key);
    if (!isCtrl(key, 'c')) return; // type-ahead is not kept: the prompt starts empty
    if (this.cancelling) return this.settle({ kind: 'quit' });
    this.cancelling = true;
    this.drawStatus();
    void this.deps.connection.cancel();
  }

  private answer(key: KeyPress): void {
    const request = this.confirming!;
    const action = isCtrl(key, 'c') ? 'cancel' : actionForKey(key);
    if (action === null) {
      this.deps.screen.write(
        `\n${this.deps.colors.yellow('  Press y, n, a, d, f or c (Enter = y).')}\n${confirmQuestion(this.deps.colors, this.deps.screen.columns)}`,
      );
      return;
    }
    this.confirming = null;
    const sent = this.deps.connection.confirm(request.confirmation_id, action);
    const pressed = key.name === 'return' || key.name === 'enter' ? 'y' : (key.sequence ?? '').toLowerCase();
    this.deps.screen.write(`${pressed} ${this.deps.colors.dim(`→ ${describeAction(action)}`)}\n`);
    if (!sent) this.line(this.deps.colors.yellow('  Not connected: the hub will ask again once the connection is back.'));
    if (action === 'cancel') this.cancelling = true;
    this.drawStatus();
  }

  /** A question still on screen that no longer applies (the turn moved on). */
  private dismissConfirmation(): void {
    if (!this.confirming) return;
    this.confirming = null;
    this.deps.screen.write(this.deps.colors.dim('(no longer asked)\n'));
  }

  private drawStatus(): void {
    const snapshot: TurnSnapshot = this.follower.snapshot;
    const text = this.confirming
      ? `? waiting for your answer about ${sanitize(this.confirming.tool)} · y n a d f c`
      : formatTurnStatus(snapshot, Date.now(), { frame: this.frame, cancelling: this.cancelling, reconnecting: this.reconnecting });
    this.deps.screen.status(text, this.reconnecting ? this.deps.colors.yellow : this.deps.colors.dim);
  }

  private newLine(): void {
    if (!this.deps.screen.atLineStart) this.deps.screen.write('\n');
  }

  private line(text: string): void {
    this.newLine();
    this.deps.screen.write(`${text}\n`);
  }
}
