import type { TurnMode } from '../../protocol/frames';
import type { HubClient } from '../api-client';
import type { CliContext } from '../context';
import { CliError, EXIT, type ExitCode } from '../exit-codes';
import type { SessionView } from '../../protocol/payloads';
import { fullHistory, replyOfTurn } from '../sessions-lookup';
import type { ConfirmAction } from '../../protocol/confirm-actions';
import { ChatConnection } from './chat-connection';
import { TurnFollower, type DoneInfo, type TurnEnd, type TurnError } from './turn-follower';

export interface ScriptedChatOptions {
  client: HubClient;
  session: SessionView;
  text: string;
  mode: TurnMode;
  workflow: string | null;
  /** How confirmations are answered: `allow` (--yes), `deny` (--deny), or null (cancel the turn). */
  autoAnswer: Extract<ConfirmAction, 'allow' | 'deny'> | null;
  json: boolean;
  context: CliContext;
}

/** How long Ctrl-C waits for the cancelled turn to end before leaving anyway. */
const CANCEL_WAIT_MS = 3_000;

/**
 * `switchboard chat --message …` (or piped stdin): one message, the answer on stdout as plain text
 * (the turn's full text from `done`, so reconnects never show in it), problems on stderr. Exit 0 when
 * the turn ends without an error frame, 1 when it had one, 2 when the hub could not be used, 130
 * when Ctrl-C cancelled it.
 */
export async function runScriptedChat(options: ScriptedChatOptions): Promise<ExitCode> {
  const { client, session, context } = options;
  let unconfirmedTool: string | null = null;
  let settle!: (end: TurnEnd | { kind: 'lost'; error: CliError }) => void;
  const ended = new Promise<TurnEnd | { kind: 'lost'; error: CliError }>((resolve) => (settle = resolve));
  const follower: TurnFollower = new TurnFollower({
    text: () => undefined, // the full text is printed once, from `done`
    changed: () => undefined,
    confirm: (request) => {
      if (options.autoAnswer) {
        connection.confirm(request.confirmation_id, options.autoAnswer);
        context.err(
          `switchboard: ${options.autoAnswer === 'allow' ? 'allowed' : 'denied'} ${request.tool} (${options.autoAnswer === 'allow' ? '--yes' : '--deny'}): ${request.message}`,
        );
        return;
      }
      unconfirmedTool ??= request.tool;
      void connection.cancel();
    },
    // An approval's progress (issue 30): told, never answered again.
    progress: (request) => {
      if (request.approval) context.err(`switchboard: ${request.tool}: ${request.approval.text}`);
    },
    notice: (error) => context.err(`switchboard: ${error.code}: ${error.message}`),
    ended: (end) => settle(end),
  });
  const connection = new ChatConnection(client, session.id, {
    onFrame: (frame) => follower.handle(frame),
    onReady: ({ outage }) => follower.resumed(outage),
    onRetry: ({ attempt, delayMs, why }) =>
      context.err(`switchboard: connection lost (${why}); reconnecting in ${Math.round(delayMs / 1000)} s (attempt ${attempt})`),
    onStop: (error) => settle({ kind: 'lost', error }),
  });
  await connection.open();
  let interrupted = false;
  const onSigint = () => {
    if (interrupted) return settle({ kind: 'lost', error: new CliError('Interrupted.', EXIT.INTERRUPTED) });
    interrupted = true;
    void connection.cancel();
    setTimeout(
      () => settle({ kind: 'lost', error: new CliError('Interrupted; the turn may still be running on the hub.', EXIT.INTERRUPTED) }),
      CANCEL_WAIT_MS,
    ).unref();
  };
  process.on('SIGINT', onSigint);
  try {
    try {
      follower.turnId = (await connection.send(options.text, options.mode, options.workflow)).id;
    } catch (error) {
      follower.dispose();
      throw error;
    }
    const end = await ended;
    if (end.kind === 'lost') throw end.error;
    if (interrupted && end.kind === 'cancelled') throw new CliError('Interrupted: the turn was cancelled.', EXIT.INTERRUPTED);
    return await report(end);
  } finally {
    process.off('SIGINT', onSigint);
    connection.close();
  }

  async function report(end: TurnEnd): Promise<ExitCode> {
    let done: DoneInfo | null = end.kind === 'done' ? end.done : null;
    const errors: TurnError[] = [...end.errors];
    if (end.kind === 'ended-unseen') {
      const reply = follower.turnId ? replyOfTurn(await fullHistory(client, session.id), follower.turnId) : null;
      if (reply) done = { message_id: reply.id, text: reply.content, ...reply.token_counts, duration_ms: 0, tool_calls: 0 };
      else errors.push({ code: 'UNKNOWN', message: 'the turn ended while the connection was down and left no answer' });
    }
    if (done) {
      if (options.json) context.out(JSON.stringify({ session_id: session.id, ...done }));
      else if (done.text !== '') context.stdout.write(done.text.endsWith('\n') ? done.text : `${done.text}\n`);
    }
    // The CANCELLED of a turn cancelled for want of --yes / --deny is explained below instead.
    for (const error of errors) if (!(unconfirmedTool && error.code === 'CANCELLED')) context.err(`switchboard: ${error.code}: ${error.message}`);
    if (unconfirmedTool) {
      context.err(
        `switchboard: the turn wanted to run ${unconfirmedTool}, which needs a confirmation: run again with --yes to allow it or --deny to refuse it. The turn was cancelled.`,
      );
    }
    return errors.length > 0 || unconfirmedTool ? EXIT.REFUSED : EXIT.OK;
  }
}
