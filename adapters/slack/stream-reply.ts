import type { Logger } from 'pino';
import { SLACK_LIMITS } from './limits';
import { platformError } from './refusals';
import { markdownReply, slackMarkdown, slackText } from './reply-text';
import { ReplyUnavailable, type InterimResult, type LiveReply } from '../shared/reply-surface';
import type { ReplyTarget } from './reply-target';
import type { SlackCalls } from './slack-outbox';

const CHUNK = SLACK_LIMITS.maxMarkdownChars;

/**
 * Slack's native streaming (`chat.startStream` → `chat.appendStream` … → `chat.stopStream`), for
 * replies in a thread. Slack only appends, so the message holds exactly what was sent: interim
 * appends carry the delta since the last one (only when a send slot is free), and the final text
 * is sent as the rest of it when it continues what streamed. When it does not (an apology, or an
 * answer the worker assembled differently), the stream is stopped and the message replaced with
 * `chat.update`; when the stream broke underway, the final text is posted whole as a new reply.
 * A refused `chat.startStream` throws `ReplyUnavailable` (the shared presenter falls back to edits).
 */
export class StreamReply implements LiveReply {
  private ts: string | null = null;
  /** The rendered text the message holds so far. */
  private sent = '';
  /** An append failed (e.g. Slack ended the stream): nothing more is appended. */
  private broken = false;

  constructor(
    private readonly calls: SlackCalls,
    private readonly target: ReplyTarget & { threadTs: string },
    private readonly logger: Logger,
    /** A view was shown: Slack hides the thread status once the bot's reply shows. */
    private readonly onShown: () => void = () => undefined,
  ) {}

  // No `begin`: nothing to post, the thread status says the agent is working, and a stream cannot start empty.

  async update(text: string): Promise<InterimResult> {
    const shown = await this.interim(text);
    if (shown) this.onShown();
    return shown ? 'shown' : 'skipped';
  }

  /** Slack takes any length here (39,000 characters, cut by `markdownReply`): one piece. */
  finish(pieces: string[]): Promise<void> {
    return this.final(pieces.join('\n\n'));
  }

  private async interim(text: string): Promise<boolean> {
    const rendered = slackMarkdown(text).slice(0, SLACK_LIMITS.maxMessageChars);
    if (rendered === '') return true;
    if (this.ts === null) {
      await this.start(rendered);
      return true;
    }
    if (this.broken || !rendered.startsWith(this.sent)) return true; // the final text settles it
    const delta = rendered.slice(this.sent.length, this.sent.length + CHUNK);
    if (delta === '') return true;
    try {
      if ((await this.calls.trySend('chat.appendStream', { channel: this.target.channel, ts: this.ts, markdown_text: delta })) === null) return false;
      this.sent += delta;
    } catch (error) {
      this.broken = true;
      this.logger.warn(
        { slack_error: platformError(error) ?? String(error), slack_channel: this.target.channel },
        'a Slack stream stopped taking appends; the final answer will be posted whole',
      );
    }
    return true;
  }

  private async final(text: string): Promise<void> {
    const rendered = markdownReply(text);
    if (this.ts === null) await this.start(rendered);
    if (!this.broken && rendered.startsWith(this.sent)) {
      try {
        return await this.finishWith(rendered.slice(this.sent.length));
      } catch (error) {
        this.logger.warn(
          { slack_error: platformError(error) ?? String(error), slack_channel: this.target.channel },
          'a Slack stream could not be finished; posting the answer whole',
        );
        return this.postWhole(text);
      }
    }
    if (!this.broken) await this.finishWith('').catch(() => undefined);
    if (this.broken) return this.postWhole(text);
    try {
      const content = rendered.length <= CHUNK ? { markdown_text: rendered } : { text: slackText(text) };
      await this.calls.send('chat.update', { channel: this.target.channel, ts: this.ts!, ...content });
    } catch {
      await this.postWhole(text);
    }
  }

  private async start(rendered: string): Promise<void> {
    const first = rendered.slice(0, CHUNK);
    let answer;
    try {
      answer = await this.calls.send('chat.startStream', {
        channel: this.target.channel,
        thread_ts: this.target.threadTs,
        recipient_user_id: this.target.recipient.userId,
        recipient_team_id: this.target.recipient.teamId,
        markdown_text: first,
      });
    } catch (error) {
      const refused = this.calls.refusals.note(this.calls.workspace, 'stream', error);
      throw new ReplyUnavailable(platformError(error) ?? String(error), refused);
    }
    this.ts = (answer as { ts?: string }).ts!;
    this.sent = first;
  }

  /** Appends `rest` in chunks Slack accepts (each waits for a slot), then stops the stream with the last one. */
  private async finishWith(rest: string): Promise<void> {
    while (rest.length > CHUNK) {
      await this.calls.send('chat.appendStream', { channel: this.target.channel, ts: this.ts!, markdown_text: rest.slice(0, CHUNK) });
      this.sent += rest.slice(0, CHUNK);
      rest = rest.slice(CHUNK);
    }
    await this.calls.send('chat.stopStream', { channel: this.target.channel, ts: this.ts!, ...(rest ? { markdown_text: rest } : {}) });
    this.sent += rest;
  }

  private async postWhole(text: string): Promise<void> {
    await this.calls.send('chat.postMessage', { channel: this.target.channel, thread_ts: this.target.threadTs, text: slackText(text) });
  }
}
