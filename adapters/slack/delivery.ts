import type { webApi } from '@slack/bolt';
import type { Logger } from 'pino';
import type { ChatDelivery, DeliveryQuestion, DeliveryReceipt, DeliveryRequest, LiveDeliveryRequest } from '../../src/core/delivery';
import { FirstMessage, presentDelivery } from '../shared/live-delivery';
import { confirmationBlocks } from './confirm-buttons';
import { sessionKeyOf } from './normalize';
import { slackSurface } from './render';
import { slackText } from './reply-text';
import type { SlackOutbox } from './slack-outbox';

type WebClient = webApi.WebClient;

/** How the channel shows its own turns: an event's turn is shown the same way. */
export interface SlackDeliveryOptions {
  editIntervalMs: number;
  threadStatus: boolean;
  logger: Logger;
  /** An approval's text with Slack user groups named by their handles (`@sre-oncall`). */
  approverNames?: (text: string) => Promise<string>;
}

/**
 * Posting an event's answer into a Slack channel (issue 29): the thread's first message at the top
 * level, later ones as replies in its thread, through the channel's outbox (its send budget and 429
 * pauses). Shown live like the channel's own turns (the shared presenter on a Slack surface): the
 * placeholder, then the message edited as the answer grows. Native streaming (`chat.startStream`)
 * needs the asking user in a channel, and an event has none, so edits it is. A person's reply in
 * that thread arrives with `replyKey`, so it continues the event's conversation. The workspace's team
 * id comes from auth.test, asked once.
 */
export function slackDelivery(client: () => WebClient, outbox: () => SlackOutbox, options: SlackDeliveryOptions): ChatDelivery {
  const approverNames = options.approverNames ?? ((text: string) => Promise.resolve(text));
  let team: Promise<string> | null = null;
  const teamId = () =>
    (team ??= client()
      .auth.test()
      .then((answer) => String(answer.team_id ?? 'T0'))
      .catch((error: unknown) => {
        team = null;
        throw error;
      }));
  const receiptOf = (workspace: string, conversation: string, thread: string | null) => (ts: string) => ({
    messageId: ts,
    replyKey: sessionKeyOf({ team: workspace, channel: conversation, threadTs: thread ?? ts }),
  });
  return {
    ask: async ({ conversation, thread, sessionId, request }: DeliveryQuestion) => {
      const calls = outbox().calls(client(), await teamId());
      const blocks = confirmationBlocks(sessionId, { ...request, message: await approverNames(request.message) });
      await calls.send('chat.postMessage', { channel: conversation, ...(thread ? { thread_ts: thread } : {}), text: `Confirm ${request.tool}?`, blocks });
    },
    present: async (request: LiveDeliveryRequest) => {
      const workspace = await teamId();
      const calls = outbox().calls(client(), workspace);
      const first = new FirstMessage(request, receiptOf(workspace, request.conversation, request.thread));
      const target = { channel: request.conversation, threadTs: request.thread, recipient: { userId: '', teamId: workspace } };
      const surface = slackSurface(calls, target, { ...options, nativeStreaming: false, onPosted: (ts) => first.seen(ts) });
      return presentDelivery(surface, request, first, { logger: options.logger, channel: 'slack' });
    },
    replace: async ({ conversation, messageId, text }) => {
      const calls = outbox().calls(client(), await teamId());
      await calls.send('chat.update', { channel: conversation, ts: messageId, text: slackText(text) });
    },
    post: async ({ conversation, thread, text }: DeliveryRequest): Promise<DeliveryReceipt> => {
      const workspace = await teamId();
      const calls = outbox().calls(client(), workspace);
      const answer = await calls.send('chat.postMessage', { channel: conversation, ...(thread ? { thread_ts: thread } : {}), text: slackText(text) });
      const ts = (answer as { ts?: unknown }).ts;
      if (typeof ts !== 'string' || ts === '') throw new Error('Slack answered chat.postMessage without a message ts');
      return receiptOf(workspace, conversation, thread)(ts);
    },
  };
}
