import { decodeCallbackData } from '../../adapters/telegram/callback-data';
import { clickUpdate, forChat, textUpdate } from '../adapters/telegram/telegram-harness';
import { FAKE_SLACK } from '../fakes/slack-api';
import { startProfileHub, testProfiles, PROFILE_START_TIMEOUT_MS, type ProfileHub } from '../helpers/hub-profiles';
import { removeTempDirs } from '../helpers/temp-dir';
import { ProtocolClient, TURN_TIMEOUT_MS, CASE_TIMEOUT_MS } from './protocol-client';

/**
 * The chat channels' webhooks on both profiles: Slack's Events API and interactivity, Telegram's
 * webhook, each answered through the platform's (fake) API. Scaled, deliveries land on API process
 * B (a button click on A), a worker runs the turn, and whichever process took a message in renders
 * its answer; a platform's retry is taken in once, whichever process it reaches.
 */
jest.setTimeout(CASE_TIMEOUT_MS);

describe.each(testProfiles())('chat channel webhooks (%s)', (profile) => {
  let hub: ProfileHub;
  let admin: ProtocolClient;

  beforeAll(async () => {
    hub = await startProfileHub(profile);
    admin = await ProtocolClient.register(hub, 'root');
  }, PROFILE_START_TIMEOUT_MS);

  afterAll(async () => {
    await hub?.stop();
    removeTempDirs();
  });

  const other = () => hub.apis[0]!;

  /** The session kept for a chat (`<channel>::<conversation>`) and its history. */
  async function chatSession(key: string): Promise<{ id: string; active_workflow_id: string | null; history: { role: string; content: string }[] }> {
    const sessions = (await admin.get('/sessions?limit=100')).body.data.items as { id: string; session_key: string; active_workflow_id: string | null }[];
    const found = sessions.find((item) => item.session_key === key);
    if (!found) throw new Error(`no session ${key}`);
    const history = (await admin.get(`/sessions/${found.id}/messages?limit=100`)).body.data.items;
    return { ...found, history };
  }

  /** Resolves once a finished Slack message in `channel` contains `text`. */
  async function slackShows(channel: string, text: string): Promise<string> {
    const deadline = Date.now() + TURN_TIMEOUT_MS;
    for (;;) {
      const found = hub.slack.workspace.messagesIn(channel).find((message) => !message.streaming && message.text.includes(text));
      if (found) return found.text;
      if (Date.now() > deadline) throw new Error(`Slack ${channel} never showed "${text}": ${JSON.stringify(hub.slack.workspace.messagesIn(channel))}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  /** Resolves once the Telegram chat shows a message (sent or edited) containing `text`. */
  const telegramShows = (chat: number, text: string) =>
    hub.telegram.waitFor(
      (call) =>
        forChat(chat)(call) && ['sendMessage', 'editMessageText'].includes(call.method) && call.status === 200 && String(call.params.text).includes(text),
      TURN_TIMEOUT_MS,
    );

  it('Slack: a DM is answered in the DM; the same event delivered again (to the other process) starts no second turn', async () => {
    const channel = 'D100';
    const event = {
      type: 'message',
      channel_type: 'im',
      channel,
      user: 'U100',
      text: 'What changed in the deploy pipeline?',
      ts: '1710000000.000100',
      team: FAKE_SLACK.teamId,
    };
    await hub.webhooks.slackEvent(hub.webhookBase, event, 'EvOnce1');
    const answer = await slackShows(channel, 'deploy pipeline');
    expect(answer).toContain('built-in offline assistant');
    await hub.webhooks.slackEvent(other(), event, 'EvOnce1');
    await hub.webhooks.slackEvent(hub.webhookBase, { ...event, text: 'And the rollback plan?', ts: '1710000000.000200' });
    await slackShows(channel, 'rollback plan');
    const session = await chatSession(`slack::${FAKE_SLACK.teamId}:${channel}`);
    expect(session.history.map((item) => item.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
    expect(session.history.filter((item) => item.content === event.text)).toHaveLength(1);
  });

  it('Telegram: a message is answered in the chat; the same update delivered again (to the other process) is taken once', async () => {
    const chat = 4201;
    const update = textUpdate(chat, 'Summarise the incident review please');
    await hub.webhooks.telegramUpdate(hub.webhookBase, update);
    await telegramShows(chat, 'incident review');
    await hub.webhooks.telegramUpdate(other(), update);
    await hub.webhooks.telegramUpdate(hub.webhookBase, textUpdate(chat, 'And the follow-up actions?'));
    await telegramShows(chat, 'follow-up actions');
    const session = await chatSession(`telegram::${chat}`);
    expect(session.history.map((item) => item.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
  });

  it('Telegram: a confirmation is asked with buttons; a click delivered to the other process allows it and the answer follows', async () => {
    const chat = 4202;
    await hub.webhooks.telegramUpdate(hub.webhookBase, textUpdate(chat, 'write a file standup.txt containing done: deploys'));
    const asked = await hub.telegram.waitFor(
      (call) => forChat(chat)(call) && call.method === 'sendMessage' && call.params.reply_markup !== undefined,
      TURN_TIMEOUT_MS,
    );
    const allow = asked.params.reply_markup.inline_keyboard
      .flat()
      .find((button: { callback_data: string }) => decodeCallbackData(button.callback_data)?.action === 'allow');
    await hub.webhooks.telegramUpdate(
      other(),
      clickUpdate({ message_id: asked.result.message_id, chat_id: chat, text: asked.params.text }, allow.callback_data),
    );
    await telegramShows(chat, 'write_file answered');
    const session = await chatSession(`telegram::${chat}`);
    const calls = session.history.flatMap((item) => (item as unknown as { tool_calls: { tool_name: string; error: string | null }[] }).tool_calls);
    expect(calls).toEqual([expect.objectContaining({ tool_name: 'write_file', error: null })]);
  });

  it('a contact bound to a workflow on one process routes its chat on the worker', async () => {
    expect(
      (await admin.post('/assistant/workflows', { name: 'vip-desk', system_prompt: 'You serve our best customers.', tool_list: 'calculator' })).status,
    ).toBe(201);
    const chat = 4203;
    expect((await admin.put(`/assistant/contacts/telegram::${chat}`, { display_name: 'Ada', tags: ['vip'], workflow: 'vip-desk' })).status).toBe(200);
    await hub.webhooks.telegramUpdate(hub.webhookBase, textUpdate(chat, 'calculate 12 * 12'));
    await telegramShows(chat, '144');
    const workflow = (await admin.get('/assistant/workflows/vip-desk')).body.data.id;
    expect((await chatSession(`telegram::${chat}`)).active_workflow_id).toBe(workflow);
  });
});
