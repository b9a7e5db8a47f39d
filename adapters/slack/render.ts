import type { Logger } from 'pino';
import type { ConfirmRequest, EditCapability, ReplyCadence, ReplySurface, WorkStatus } from '../shared/reply-surface';
import { confirmationBlocks } from './confirm-buttons';
import { SLACK_LIMITS } from './limits';
import { REPLY_TEXT, slackText } from './reply-text';
import type { ReplyTarget } from './reply-target';
import type { SlackCalls } from './slack-outbox';
import { StreamReply } from './stream-reply';
import { STATUS_TEXT, ThreadStatus } from './thread-status';

export { REPLY_TEXT, slackText } from './reply-text';
export type { ReplyTarget } from './reply-target';

export interface RenderOptions {
  editIntervalMs: number;
  /** `channels.slack.native_streaming`: stream in threads with chat.startStream (unless the workspace refuses). */
  nativeStreaming: boolean;
  /** `channels.slack.thread_status`: show "is thinking…" / "is running <tool>…" in threads. */
  threadStatus: boolean;
  logger: Logger;
  /** Told the ts of each message this surface posts (an event's delivery records the first as its receipt); the surface waits for it before its next call. */
  onPosted?: (ts: string | undefined) => Promise<void>;
  /** An approval's text with Slack user groups named by their handles (`@sre-oncall`); absent: as it is. */
  approverNames?: (text: string) => Promise<string>;
}

/** The texts of approvals (issue 30) that name their approvers. */
const NAMES_APPROVERS = 'Waiting for approval by';

/** The reaction on a message that waits behind the running turn. */
export const WAITING_REACTION = 'hourglass_flowing_sand';

/**
 * Slack as a reply surface for one message (the shared presenter shows the turn): in a thread the
 * answer streams natively (StreamReply); at the top level of a DM, where the workspace refuses
 * streaming, or when it is turned off, a message is edited as it grows; every write spends the
 * shared send budget (SlackCalls). The thread status tells what the agent is doing; confirmations
 * are Block Kit messages; a message waiting behind the running turn gets a reaction. Slack cuts an
 * answer at its message limit itself (`slackText`), so no split rule; a failed turn's apology
 * replaces what streamed.
 *
 * `waitingOn`: the inbound message (its channel and ts), for the waiting reaction.
 */
export function slackSurface(calls: SlackCalls, target: ReplyTarget, options: RenderOptions, waitingOn?: { channel: string; ts: string }): ReplySurface {
  const thread = target.threadTs === null ? null : { ...target, threadTs: target.threadTs };
  const status = new ThreadStatus(calls, options.threadStatus && thread ? { channel: thread.channel, threadTs: thread.threadTs } : null);
  const threadArgs = target.threadTs ? { thread_ts: target.threadTs } : {};
  const post = async (text: string) => {
    const answer = (await calls.send('chat.postMessage', { channel: target.channel, ...threadArgs, text })) as { ts?: string };
    await options.onPosted?.(answer.ts);
    return answer;
  };
  const cadence: ReplyCadence = {
    editIntervalMs: options.editIntervalMs,
    statusRefreshMs: SLACK_LIMITS.statusRefreshMs,
    failureNote: 'replace',
    placeholder: REPLY_TEXT.placeholder,
    texts: { apology: REPLY_TEXT.apology, cancelled: REPLY_TEXT.cancelled, busy: REPLY_TEXT.busy },
  };
  let reaction: Promise<boolean> | null = null;
  const named = async (text: string) => (options.approverNames && text.includes(NAMES_APPROVERS) ? options.approverNames(text) : text);
  return {
    cadence,
    post: async (text) => void (await post(slackText(await named(text)))),
    stream: () =>
      thread !== null && options.nativeStreaming && !calls.refusals.isRefused(calls.workspace, 'stream')
        ? new StreamReply(calls, thread, options.logger, () => status.replied())
        : null,
    edit: editMessages(calls, target, post, () => status.replied()),
    status: (work, again) => showStatus(status, work, again),
    ask: async (request: ConfirmRequest, sessionId: string) => {
      const blocks = confirmationBlocks(sessionId, { ...request, message: await named(request.message) });
      await calls.send('chat.postMessage', { channel: target.channel, ...threadArgs, text: `Confirm ${request.tool}?`, blocks });
      status.replied();
      await status.set(STATUS_TEXT.confirm(request.tool));
    },
    ...(waitingOn
      ? {
          react: async (waiting: boolean) => {
            const args = { channel: waitingOn.channel, timestamp: waitingOn.ts, name: WAITING_REACTION };
            if (waiting) reaction = calls.extra('reactions', 'reactions.add', args);
            // Removed only once the reaction was added (and only if it was).
            else if (reaction && (await reaction)) await calls.extra('reactions', 'reactions.remove', args);
          },
        }
      : {}),
  };
}

/** The edit way: `chat.postMessage`, then `chat.update` (interim ones only with a free send slot). */
function editMessages(calls: SlackCalls, target: ReplyTarget, post: (text: string) => Promise<{ ts?: string }>, shown: () => void): EditCapability {
  return {
    open: async (text, { interim }) => {
      // The first view waits for its slot like the placeholder: it is the message later edits change.
      const answer = await post(slackText(text));
      if (interim) shown();
      return answer.ts!;
    },
    change: async (ts, text, { interim }) => {
      const args = { channel: target.channel, ts, text: slackText(text) };
      if (!interim) {
        await calls.send('chat.update', args);
        return true;
      }
      const changed = (await calls.trySend('chat.update', args)) !== null;
      if (changed) shown();
      return changed;
    },
  };
}

/** The thread status: each working state and tool in Slack's words (`writing` has none: the answer shows). */
async function showStatus(status: ThreadStatus, work: WorkStatus, again: boolean): Promise<void> {
  if (again) return status.refresh();
  switch (work.kind) {
    case 'working': {
      const text = STATUS_TEXT.states[work.state];
      if (text) await status.set(text);
      return;
    }
    case 'tool':
      return status.set(STATUS_TEXT.tool(work.tool));
    case 'confirm': // set once the question is posted (posting clears Slack's status)
    case 'answering':
      return;
    case 'idle':
      return status.clear();
    default:
      work satisfies never;
  }
}
