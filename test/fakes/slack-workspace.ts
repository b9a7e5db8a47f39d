/** A message in the fake workspace, as a person would see it. */
export interface FakeMessage {
  ts: string;
  channel: string;
  thread_ts?: string;
  text: string;
  /** A stream still open (chat.startStream without chat.stopStream yet). */
  streaming: boolean;
  /** How it was made: `post` (chat.postMessage) or `stream` (chat.startStream). */
  kind: 'post' | 'stream';
  blocks?: unknown[];
}

/** Slack's limit for one `markdown_text`. */
const MARKDOWN_LIMIT = 12_000;

/**
 * The state behind the fake Slack's message methods, with Slack's rules for them: a stream is a
 * thread reply (`thread_ts`), names its recipient outside a DM, starts with text, and takes appends
 * only until it is stopped (`message_not_in_streaming_state`); `markdown_text` is at most 12,000
 * characters. Also the assistant thread statuses and suggested prompts it was sent.
 */
export class SlackWorkspace {
  readonly messages = new Map<string, FakeMessage>();
  /** Every status set per thread (`channel:thread_ts`), in order; "" clears. */
  readonly statuses = new Map<string, string[]>();
  /** Suggested prompts set per thread (`channel:thread_ts`). */
  readonly prompts = new Map<string, { title?: string; prompts: Array<{ title: string; message: string }> }>();
  /** Reactions as they stand, per message (`channel:ts`), and every add/remove in order. */
  readonly reactions = new Map<string, Set<string>>();
  readonly reactionLog: string[] = [];
  /** Ephemeral messages (seen by one user only), in order. */
  readonly ephemerals: Array<{ channel: string; user: string; thread_ts?: string; text: string }> = [];
  private nextTs = 1_700_000_000_000_100;

  messagesIn(channel: string): FakeMessage[] {
    return [...this.messages.values()].filter((message) => message.channel === channel);
  }

  statusesOf(channel: string, threadTs: string): string[] {
    return this.statuses.get(`${channel}:${threadTs}`) ?? [];
  }

  answer(method: string, args: Record<string, any>): Record<string, unknown> {
    switch (method) {
      case 'chat.postMessage': {
        const message = this.add({
          channel: args.channel,
          thread_ts: args.thread_ts,
          text: args.markdown_text ?? args.text ?? '',
          streaming: false,
          kind: 'post',
          blocks: args.blocks,
        });
        return { ok: true, channel: args.channel, ts: message.ts, message: { text: message.text, ts: message.ts, thread_ts: args.thread_ts } };
      }
      case 'chat.postEphemeral':
        this.ephemerals.push({ channel: args.channel, user: args.user, thread_ts: args.thread_ts, text: args.text ?? '' });
        return { ok: true, message_ts: `${Date.now() / 1000}` };
      case 'chat.update': {
        const message = this.messages.get(args.ts);
        if (message && !message.streaming) message.text = args.markdown_text ?? args.text ?? message.text;
        if (message?.streaming) return { ok: false, error: 'message_not_in_streaming_state' };
        return { ok: true, channel: args.channel, ts: args.ts, text: args.text };
      }
      case 'chat.startStream': {
        if (!args.thread_ts) return { ok: false, error: 'invalid_arguments' };
        if (!String(args.channel).startsWith('D') && (!args.recipient_user_id || !args.recipient_team_id)) return { ok: false, error: 'invalid_arguments' };
        const problem = markdownProblem(args.markdown_text);
        if (problem) return { ok: false, error: problem };
        const message = this.add({ channel: args.channel, thread_ts: args.thread_ts, text: args.markdown_text, streaming: true, kind: 'stream' });
        return { ok: true, channel: args.channel, ts: message.ts };
      }
      case 'chat.appendStream': {
        const message = this.messages.get(args.ts);
        if (!message || message.channel !== args.channel) return { ok: false, error: 'message_not_found' };
        if (!message.streaming) return { ok: false, error: 'message_not_in_streaming_state' };
        const problem = markdownProblem(args.markdown_text);
        if (problem) return { ok: false, error: problem };
        message.text += args.markdown_text;
        return { ok: true, channel: args.channel, ts: args.ts };
      }
      case 'chat.stopStream': {
        const message = this.messages.get(args.ts);
        if (!message || message.channel !== args.channel) return { ok: false, error: 'message_not_found' };
        if (!message.streaming) return { ok: false, error: 'message_not_in_streaming_state' };
        if (args.markdown_text !== undefined) {
          const problem = markdownProblem(args.markdown_text);
          if (problem) return { ok: false, error: problem };
          message.text += args.markdown_text;
        }
        message.streaming = false;
        return { ok: true, channel: args.channel, ts: args.ts, message: { text: message.text, ts: message.ts } };
      }
      case 'assistant.threads.setStatus': {
        if (!args.channel_id || !args.thread_ts || typeof args.status !== 'string') return { ok: false, error: 'invalid_arguments' };
        const key = `${args.channel_id}:${args.thread_ts}`;
        this.statuses.set(key, [...(this.statuses.get(key) ?? []), args.status]);
        return { ok: true };
      }
      case 'assistant.threads.setSuggestedPrompts': {
        if (!args.channel_id || !Array.isArray(args.prompts) || args.prompts.length > 4) return { ok: false, error: 'invalid_arguments' };
        this.prompts.set(`${args.channel_id}:${args.thread_ts}`, { title: args.title, prompts: args.prompts });
        return { ok: true };
      }
      case 'reactions.add':
      case 'reactions.remove': {
        if (!args.channel || !args.timestamp || !args.name) return { ok: false, error: 'invalid_arguments' };
        const key = `${args.channel}:${args.timestamp}`;
        const names = this.reactions.get(key) ?? new Set<string>();
        const adding = method === 'reactions.add';
        if (adding === names.has(args.name)) return { ok: false, error: adding ? 'already_reacted' : 'no_reaction' };
        if (adding) names.add(args.name);
        else names.delete(args.name);
        this.reactions.set(key, names);
        this.reactionLog.push(`${adding ? '+' : '-'}${args.name} ${key}`);
        return { ok: true };
      }
      default:
        return { ok: false, error: 'unknown_method' };
    }
  }

  private add(fields: Omit<FakeMessage, 'ts'>): FakeMessage {
    const ts = `${Math.floor(this.nextTs / 1_000_000)}.${String(this.nextTs++ % 1_000_000).padStart(6, '0')}`;
    const message = { ts, ...fields };
    this.messages.set(ts, message);
    return message;
  }
}

function markdownProblem(text: unknown): string | null {
  if (typeof text !== 'string' || text === '') return 'invalid_arguments';
  return text.length > MARKDOWN_LIMIT ? 'msg_too_long' : null;
}
