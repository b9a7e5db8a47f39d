import { FAKE_SLACK } from '../fakes/slack-api';
import { openAiTextReply } from '../fakes/openai-server';
import { textUpdate } from '../adapters/telegram/telegram-harness';
import { startChatCluster, type ChatCluster } from '../helpers/chat-cluster';
import { request } from '../helpers/http';
import { removeTempDirs } from '../helpers/temp-dir';

/**
 * Turn identity does not depend on clocks: API process A runs 5 s ahead, API process B 5 s behind,
 * and the worker 5 s ahead (libfaketime). Messages of one conversation land on both API processes
 * back to back, so each process renders turns whose frames were stamped by clocks 10 s apart, right
 * after another turn's frames. Every turn is still rendered whole, with its own text only, on Slack
 * (an edited DM reply and a native stream in a thread) and on Telegram (a private chat and a group).
 */
let cluster: ChatCluster;
let ts = 0;

beforeAll(async () => {
  cluster = await startChatCluster({ clocks: { a: '+5s', b: '-5s', worker: '+5s' } });
}, 90_000);

afterAll(async () => {
  await cluster?.stop();
  removeTempDirs();
});

/** A paced answer: its frames spread over the turn, so the turns' frames sit close together in the log. */
const answer = (text: string) => ({ ...openAiTextReply(text.split(/(?= )/)), delayMs: 25 });

async function until(check: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const nextTs = () => `1720000000.${String(++ts).padStart(6, '0')}`;

it('the processes really disagree: their clocks are 10 s apart', async () => {
  const [a, b] = await Promise.all(cluster.apis.map((api) => request(`${api}/api/v1/health`)));
  const apart = Date.parse(a.body.meta.timestamp) - Date.parse(b.body.meta.timestamp);
  expect(apart).toBeGreaterThan(9_000);
  expect(apart).toBeLessThan(11_000);
});

describe('Slack', () => {
  /** The finished messages of `channel` (not a running stream), oldest first. */
  const finished = (channel: string) => cluster.slack.workspace.messagesIn(channel).filter((message) => !message.streaming && message.text !== '_…_');

  it('a DM: two messages back to back on A and B, each reply whole and its own', async () => {
    const texts = ['The first answer has several words in it.', 'The second answer is another sentence entirely.'];
    cluster.model.enqueue(...texts.map(answer));
    const dm = (text: string) => ({ type: 'message', channel_type: 'im', channel: 'DSKEW', user: 'U7', text, ts: nextTs(), team: FAKE_SLACK.teamId });
    await cluster.slackEvent(0, dm('first'));
    await cluster.slackEvent(1, dm('second'));
    await until(() => texts.every((text) => finished('DSKEW').some((message) => message.text === text)));
    expect(finished('DSKEW').map((message) => message.text)).toEqual(texts);
  });

  it('a thread: native streams started on A and on B each carry exactly their own answer', async () => {
    const texts = ['Streamed answer number one, word by word.', 'Streamed answer number two, also word by word.'];
    cluster.model.enqueue(...texts.map(answer));
    const root = nextTs();
    const mention = (text: string, extra: Record<string, unknown> = {}) => ({
      type: 'app_mention',
      channel_type: 'channel',
      channel: 'CSKEW',
      user: 'U8',
      text: `<@${FAKE_SLACK.botUserId}> ${text}`,
      ts: nextTs(),
      team: FAKE_SLACK.teamId,
      ...extra,
    });
    await cluster.slackEvent(0, { ...mention('one'), ts: root });
    await cluster.slackEvent(1, mention('two', { thread_ts: root }));
    await until(() => texts.every((text) => finished('CSKEW').some((message) => message.text === text)));
    const replies = finished('CSKEW').filter((message) => message.thread_ts === root);
    expect(replies.map((message) => [message.kind, message.text])).toEqual(texts.map((text) => ['stream', text]));
  });
});

describe('Telegram', () => {
  const sent = (chatId: number) =>
    cluster.telegram.calls
      .filter((call) => call.method === 'sendMessage' && Number(call.params.chat_id) === chatId && call.status === 200 && !call.params.reply_markup)
      .map((call) => call.params.text as string);
  const edits = (chatId: number) =>
    cluster.telegram.calls.filter((call) => call.method === 'editMessageText' && Number(call.params.chat_id) === chatId && call.status === 200);

  it('a private chat: two messages back to back on B and A, each answer whole and its own', async () => {
    const texts = ['Telegram private answer one, several words.', 'Telegram private answer two, more words.'];
    cluster.model.enqueue(...texts.map(answer));
    await cluster.telegramUpdate(1, textUpdate(7201, 'first'));
    await cluster.telegramUpdate(0, textUpdate(7201, 'second'));
    await until(() => sent(7201).length === 2);
    expect(sent(7201)).toEqual(texts);
    // Every draft of a turn is a beginning of that turn's answer, never the other's.
    const drafts = cluster.telegram.calls
      .filter((call) => call.method === 'sendMessageDraft' && Number(call.params.chat_id) === 7201)
      .map((call) => call.params.text as string);
    expect(drafts.filter((draft) => !texts.some((text) => text.startsWith(draft.replace(/\s*…$/, ''))))).toEqual([]);
  });

  it('a group: each answer grows by edits of its own message and ends whole', async () => {
    const texts = ['Group answer one grows by edits.', 'Group answer two grows by edits too.'];
    cluster.model.enqueue(...texts.map(answer));
    await cluster.telegramUpdate(0, textUpdate(-7202, 'first'));
    await cluster.telegramUpdate(1, textUpdate(-7202, 'second'));
    const finalOf = (text: string) => [...sent(-7202), ...edits(-7202).map((call) => call.params.text)].includes(text);
    await until(() => texts.every(finalOf));
    // Each message the bot sent in the group is edited only towards its own answer.
    const byMessage = new Map<number, string[]>();
    for (const call of cluster.telegram.calls.filter(
      (c) => Number(c.params.chat_id) === -7202 && c.status === 200 && ['sendMessage', 'editMessageText'].includes(c.method),
    )) {
      const id = call.method === 'sendMessage' ? call.result.message_id : call.params.message_id;
      byMessage.set(id, [...(byMessage.get(id) ?? []), call.params.text]);
    }
    const finals = [...byMessage.values()].map((versions) => versions.at(-1));
    expect(finals).toEqual(texts);
    for (const versions of byMessage.values()) {
      const own = texts.find((text) => text === versions.at(-1))!;
      expect(versions.filter((version) => !own.startsWith(version.replace(/\s*…$/, '')) && version !== own)).toEqual([]);
    }
  });
});
