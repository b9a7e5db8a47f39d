import { REPLY_TEXT, slackText } from './reply-text';
import type { ReplyTarget, ReplyWriter } from './reply-writer';
import type { SlackCalls } from './slack-outbox';

/**
 * The fallback (and the top level of a DM, where Slack does not stream): a message posted when the
 * turn starts and edited with `chat.update` as the answer grows. Interim edits spend only a free
 * send slot; the placeholder and the final edit wait for one.
 */
export class EditReply implements ReplyWriter {
  readonly kind = 'edit' as const;
  private ts: string | null = null;

  constructor(
    private readonly calls: SlackCalls,
    private readonly target: ReplyTarget,
  ) {}

  async begin(): Promise<void> {
    if (this.ts === null) await this.post(REPLY_TEXT.placeholder);
  }

  async interim(text: string): Promise<boolean> {
    if (this.ts === null) {
      await this.post(slackText(text));
      return true;
    }
    return (await this.calls.trySend('chat.update', { channel: this.target.channel, ts: this.ts, text: slackText(text) })) !== null;
  }

  async final(text: string): Promise<void> {
    if (this.ts === null) await this.post(slackText(text));
    else await this.calls.send('chat.update', { channel: this.target.channel, ts: this.ts, text: slackText(text) });
  }

  private async post(text: string): Promise<void> {
    const thread = this.target.threadTs ? { thread_ts: this.target.threadTs } : {};
    const answer = await this.calls.send('chat.postMessage', { channel: this.target.channel, ...thread, text });
    this.ts = (answer as { ts?: string }).ts!;
  }
}
