import { createHmac, randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { REPLY_TEXT } from '../../../adapters/slack/reply-text';
import { startService } from '../../../src/main';
import { FAKE_SLACK, FakeSlackApi, MESSAGE_METHODS, type SlackApiCall } from '../../fakes/slack-api';
import { ScriptedProvider } from '../../fakes/scripted-provider';
import { TestTools } from '../../fakes/test-tools';
import { GENEROUS_RATE_LIMITS } from '../../helpers/auth-service';
import { testEnv } from '../../helpers/env';
import { request } from '../../helpers/http';
import { LogCapture } from '../../helpers/log-capture';
import { makeTempDir } from '../../helpers/temp-dir';
import { registerUser } from '../../helpers/users';
import type { ChannelUnderTest, Conversation } from './channel-under-test';

/** Slack: signed Events API deliveries in, the real bolt / web-api client out to a fake Slack; a DM per conversation. */
export async function startSlack(): Promise<ChannelUnderTest> {
  const signingSecret = randomBytes(16).toString('hex');
  const slack = new FakeSlackApi();
  await slack.start();
  const provider = new ScriptedProvider();
  const tools = new TestTools();
  const cwd = makeTempDir();
  writeFileSync(path.join(cwd, 'config.yaml'), 'agent:\n  default_tools: [lookup, save_note]\nchannels:\n  slack:\n    edit_interval_ms: 200\n');
  const service = await startService({
    env: testEnv(path.join(cwd, 'data'), {
      ...GENEROUS_RATE_LIMITS,
      SERVICE_SLACK_BOT_TOKEN: `xoxb-${randomBytes(8).toString('hex')}`,
      SERVICE_SLACK_SIGNING_SECRET: signingSecret,
      SERVICE_SLACK_API_URL: slack.url,
    }),
    cwd,
    logDestination: new LogCapture(),
    provider,
    tools,
  }).catch(async (error: unknown) => {
    await slack.stop(); // no server left open when the hub does not start
    throw error;
  });
  const api = `http://127.0.0.1:${service.port}/api/v1`;
  const adminToken = (await registerUser(api, 'root')).token;
  const signed = (path: string, contentType: string, body: string) => {
    const timestamp = Math.floor(Date.now() / 1000);
    const signature = `v0=${createHmac('sha256', signingSecret).update(`v0:${timestamp}:${body}`).digest('hex')}`;
    return request(`${api}/channels/slack/${path}`, {
      method: 'POST',
      headers: { 'content-type': contentType, 'x-slack-request-timestamp': String(timestamp), 'x-slack-signature': signature },
      body,
    });
  };
  let conversations = 0;
  let events = 0;

  const conversation = async (): Promise<Conversation> => {
    conversations += 1;
    const channel = `D${conversations}`;
    const user = `U${conversations}`;
    const key = `slack::${FAKE_SLACK.teamId}:${channel}`;
    const inChannel = (call: SlackApiCall) => call.args.channel === channel;
    const textOf = (call: SlackApiCall): string =>
      call.args.markdown_text ?? call.args.text ?? call.args.chunks?.map((chunk: any) => chunk.text ?? '').join('') ?? '';
    const shown = () =>
      slack.workspace.messagesIn(channel).flatMap((message) => [message.text, ...((message.blocks ?? []) as any[]).map((block) => block.text?.text ?? '')]);
    return {
      expectedKey: key,
      expectedBinding: `slack:${channel}`,
      sessionId: async () => {
        const sessions = await request(`${api}/sessions?limit=100`, { headers: { authorization: `Bearer ${adminToken}` } });
        return sessions.body.data.items.find((item: any) => item.session_key === key).id;
      },
      send: async (text) => {
        const eventId = `EvContract${++events}`;
        const event = {
          type: 'message',
          channel_type: 'im',
          channel,
          user,
          text,
          ts: `1710000000.${String(events).padStart(6, '0')}`,
          team: FAKE_SLACK.teamId,
        };
        const body = JSON.stringify({
          token: 'legacy',
          team_id: FAKE_SLACK.teamId,
          api_app_id: 'A1',
          type: 'event_callback',
          event_id: eventId,
          event_time: Math.floor(Date.now() / 1000),
          event,
        });
        const ack = await signed('events', 'application/json', body);
        if (ack.status !== 200) throw new Error(`Slack event refused: ${ack.status}`);
        // Slack retries an event it thinks was not acknowledged: the same body, numbered.
        return { redeliver: async () => void (await signed('events', 'application/json', body)) };
      },
      showsWorking: async (prefix) => {
        await slack.waitFor((call) => MESSAGE_METHODS.has(call.method) && inChannel(call) && textOf(call).startsWith(prefix));
      },
      showsAnswer: async (text) => void (await slack.waitForReply(channel, text)),
      confirmation: async () => {
        const asked = await slack.waitFor((call) => call.method === 'chat.postMessage' && inChannel(call) && Array.isArray(call.args.blocks));
        const buttons = asked.args.blocks.flatMap((block: any) => block.elements ?? []);
        return {
          offered: buttons.map((button: any) => String(button.action_id).replace('switchboard_confirm_', '')),
          answer: async (action) => {
            const button = buttons.find((candidate: any) => candidate.action_id === `switchboard_confirm_${action}`);
            const payload = {
              type: 'block_actions',
              team: { id: FAKE_SLACK.teamId },
              user: { id: user, name: 'ada' },
              api_app_id: 'A1',
              trigger_id: 't1',
              container: { type: 'message', message_ts: '1', channel_id: channel },
              channel: { id: channel, name: 'directmessage' },
              message: { ts: '1', text: asked.args.text },
              actions: [{ type: 'button', action_id: button.action_id, block_id: 'b', value: button.value, action_ts: '1' }],
            };
            const clicked = await signed(
              'interactions',
              'application/x-www-form-urlencoded',
              new URLSearchParams({ payload: JSON.stringify(payload) }).toString(),
            );
            if (clicked.status !== 200) throw new Error(`Slack click refused: ${clicked.status}`);
          },
        };
      },
      failureShown: async () => (await slack.waitForReply(channel, REPLY_TEXT.apology)).text,
      shown,
    };
  };

  return {
    name: 'slack',
    provider,
    tools,
    api,
    adminToken,
    conversation,
    stop: async () => {
      await service.stop();
      await slack.stop();
    },
  };
}
