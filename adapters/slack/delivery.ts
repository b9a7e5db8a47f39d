import type { webApi } from '@slack/bolt';
import type { ChatDelivery, DeliveryQuestion, DeliveryReceipt, DeliveryRequest } from '../../src/core/delivery';
import { confirmationBlocks } from './confirm-buttons';
import { sessionKeyOf } from './normalize';
import { slackText } from './reply-text';
import type { SlackOutbox } from './slack-outbox';

type WebClient = webApi.WebClient;

/**
 * Posting an event's answer into a Slack channel (issue 29): the thread's first message at the top
 * level, later ones as replies in its thread, through the channel's outbox (its send budget and 429
 * pauses). A person's reply in that thread arrives with `replyKey`, so it continues the event's
 * conversation. The workspace's team id comes from auth.test, asked once.
 */
export function slackDelivery(
  client: () => WebClient,
  outbox: () => SlackOutbox,
  /** An approval's text with Slack user groups named by their handles (`@sre-oncall`). */
  approverNames: (text: string) => Promise<string> = (text) => Promise.resolve(text),
): ChatDelivery {
  let team: Promise<string> | null = null;
  const teamId = () =>
    (team ??= client()
      .auth.test()
      .then((answer) => String(answer.team_id ?? 'T0'))
      .catch((error: unknown) => {
        team = null;
        throw error;
      }));
  return {
    ask: async ({ conversation, thread, sessionId, request }: DeliveryQuestion) => {
      const calls = outbox().calls(client(), await teamId());
      const blocks = confirmationBlocks(sessionId, { ...request, message: await approverNames(request.message) });
      await calls.send('chat.postMessage', { channel: conversation, ...(thread ? { thread_ts: thread } : {}), text: `Confirm ${request.tool}?`, blocks });
    },
    post: async ({ conversation, thread, text }: DeliveryRequest): Promise<DeliveryReceipt> => {
      const workspace = await teamId();
      const calls = outbox().calls(client(), workspace);
      const answer = await calls.send('chat.postMessage', { channel: conversation, ...(thread ? { thread_ts: thread } : {}), text: slackText(text) });
      const ts = (answer as { ts?: unknown }).ts;
      if (typeof ts !== 'string' || ts === '') throw new Error('Slack answered chat.postMessage without a message ts');
      return { messageId: ts, replyKey: sessionKeyOf({ team: workspace, channel: conversation, threadTs: thread ?? ts }) };
    },
  };
}
