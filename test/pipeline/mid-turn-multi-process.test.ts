import { STILL_ANSWERING_TEXT } from '../../adapters/telegram/render';
import { openAiChunk, openAiTextReply } from '../fakes/openai-server';
import type { ScriptedReply } from '../fakes/scripted-http-server';
import { textUpdate, waitForText } from '../adapters/telegram/telegram-harness';
import { startChatCluster, type ChatCluster } from '../helpers/chat-cluster';
import { removeTempDirs } from '../helpers/temp-dir';

/**
 * The mid-turn policies across processes: a Telegram chat's messages reach API process A or B
 * (webhooks land anywhere), a separate worker runs the turns, and whichever process ends a turn
 * starts the next waiting one. Each policy is a workflow bound to the chat's contact.
 */
let cluster: ChatCluster;

beforeAll(async () => {
  cluster = await startChatCluster();
  for (const policy of ['queue', 'reject', 'steer', 'collect']) {
    const created = await cluster.admin('POST', '/assistant/workflows', {
      name: `w-${policy}`,
      system_prompt: `Policy ${policy}.`,
      tool_list: 'write_file',
      mid_turn: policy,
    });
    expect(created.status).toBe(201);
  }
}, 90_000);

afterAll(async () => {
  await cluster?.stop();
  removeTempDirs();
});

afterEach(() => cluster.model.clearReplies());

/** A chat whose contact always gets workflow `w-<policy>`. */
async function chatWith(policy: string, chatId: number): Promise<number> {
  expect((await cluster.admin('PUT', `/assistant/contacts/telegram::${chatId}`, { workflow: `w-${policy}` })).status).toBe(200);
  return chatId;
}

/** A model answer that stops after its first piece until `open()` is called. */
function heldReply(pieces: string[]) {
  let open!: () => void;
  let reached!: () => void;
  const atHold = new Promise<void>((resolve) => (reached = resolve));
  const until = new Promise<void>((resolve) => (open = resolve));
  const reply = openAiTextReply(pieces) as Extract<ScriptedReply, { kind: 'stream' }>;
  return { reply: { ...reply, holdBefore: { index: 2, until, reached } }, atHold, open };
}

/** What each model request was asked last (its final user message) and the user messages it saw. */
function userMessagesOf(index: number): string[] {
  const messages = cluster.model.requests[index]!.body.messages as { role: string; content: string }[];
  return messages.filter((message) => message.role === 'user').map((message) => message.content);
}

async function until(check: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The answers the chat shows, in the order Telegram took them. */
const answerCalls = (chatId: number) =>
  cluster.telegram.calls.filter(
    (call) => call.method === 'sendMessage' && Number(call.params.chat_id) === chatId && call.status === 200 && /^Answer /.test(call.params.text),
  );
const answered = (chatId: number) => answerCalls(chatId).map((call) => call.params.text as string);

/**
 * Each answer and the message it quotes. Turns run in order (the model's requests show it), and the
 * answers of consecutive turns, sent by whichever API processes follow them (each with its own send
 * budget), show in that order too: the follower of the next turn waits for the chat's rendering
 * lease, which the previous turn's follower holds until its last send (src/core/render-lease.ts,
 * in Redis here). Each answer also quotes the message it answers.
 */
const quoted = (chatId: number) =>
  Object.fromEntries(answerCalls(chatId).map((call) => [call.params.text as string, call.params.reply_parameters?.message_id as number]));

it('queue: messages sent to either process during a turn are answered next, one turn each, in order', async () => {
  const chat = await chatWith('queue', 7101);
  const held = heldReply(['Answer', ' one.']);
  cluster.model.enqueue(held.reply, openAiTextReply(['Answer', ' two.']), openAiTextReply(['Answer', ' three.']));
  const requests = cluster.model.requests.length;
  const updates = [textUpdate(chat, 'first question'), textUpdate(chat, 'second question'), textUpdate(chat, 'third question')];
  await cluster.telegramUpdate(0, updates[0]!);
  await held.atHold;
  await cluster.telegramUpdate(1, updates[1]!);
  await cluster.telegramUpdate(0, updates[2]!);
  held.open();
  await until(() => answered(chat).length === 3);
  expect(answered(chat)).toEqual(['Answer one.', 'Answer two.', 'Answer three.']);
  expect(quoted(chat)).toEqual({
    'Answer one.': updates[0]!.message.message_id,
    'Answer two.': updates[1]!.message.message_id,
    'Answer three.': updates[2]!.message.message_id,
  });
  expect(cluster.model.requests.length - requests).toBe(3);
  expect(userMessagesOf(requests + 1)).toEqual(['first question', 'second question']);
  expect(userMessagesOf(requests + 2)).toEqual(['first question', 'second question', 'third question']);
});

it('reject: a message sent to the other process during a turn is refused in the chat and not stored', async () => {
  const chat = await chatWith('reject', 7102);
  const held = heldReply(['Answer', ' only.']);
  cluster.model.enqueue(held.reply);
  const requests = cluster.model.requests.length;
  await cluster.telegramUpdate(0, textUpdate(chat, 'start'));
  await held.atHold;
  await cluster.telegramUpdate(1, textUpdate(chat, 'too soon'));
  await waitForText(cluster.telegram, chat, STILL_ANSWERING_TEXT, 10_000);
  held.open();
  await waitForText(cluster.telegram, chat, 'Answer only.', 20_000);
  await new Promise((resolve) => setTimeout(resolve, 300));
  expect(cluster.model.requests.length - requests).toBe(1);
  const session = (await cluster.admin('GET', '/sessions?limit=100')).body.data.items.find((item: any) => item.session_key === `telegram::${chat}`);
  const history = (await cluster.admin('GET', `/sessions/${session.id}/messages`)).body.data.items.map((item: any) => item.content);
  expect(history).toEqual(['start', 'Answer only.']);
});

it('collect: messages sent to both processes during a turn are answered together by one next turn', async () => {
  const chat = await chatWith('collect', 7103);
  const held = heldReply(['Answer', ' one.']);
  cluster.model.enqueue(held.reply, openAiTextReply(['Answer', ' both.']));
  const requests = cluster.model.requests.length;
  const start = textUpdate(chat, 'start');
  await cluster.telegramUpdate(1, start);
  await held.atHold;
  await cluster.telegramUpdate(0, textUpdate(chat, 'also this'));
  await cluster.telegramUpdate(1, textUpdate(chat, 'and this'));
  held.open();
  await until(() => answered(chat).length === 2);
  await new Promise((resolve) => setTimeout(resolve, 300));
  expect(answered(chat)).toEqual(['Answer one.', 'Answer both.']);
  expect(quoted(chat)['Answer one.']).toBe(start.message.message_id);
  expect(cluster.model.requests.length - requests).toBe(2);
  expect(userMessagesOf(requests + 1)).toEqual(['start', 'also this', 'and this']);
});

it('steer: a message to the other process ends the running turn at its tool boundary (the pending confirmation denied) and runs next', async () => {
  const chat = await chatWith('steer', 7104);
  const toolCall: ScriptedReply = {
    kind: 'stream',
    events: [
      openAiChunk.delta({ role: 'assistant', content: '' }),
      openAiChunk.text('Let me write that down. '),
      openAiChunk.toolCall({
        index: 0,
        id: 'call-steer',
        type: 'function',
        function: { name: 'write_file', arguments: JSON.stringify({ path: 'steer.txt', content: 'x' }) },
      }),
      openAiChunk.finish('tool_calls'),
      openAiChunk.usage(10, 5),
      openAiChunk.done(),
    ],
  };
  cluster.model.enqueue(toolCall, openAiTextReply(['Answer', ' four.']));
  const requests = cluster.model.requests.length;
  await cluster.telegramUpdate(0, textUpdate(chat, 'write a file'));
  // The turn waits for a person to confirm write_file.
  await cluster.telegram.waitFor(
    (call) => call.method === 'sendMessage' && Number(call.params.chat_id) === chat && call.params.reply_markup !== undefined,
    20_000,
  );
  await cluster.telegramUpdate(1, textUpdate(chat, 'never mind, what is 2+2?'));
  await waitForText(cluster.telegram, chat, 'Answer four.', 20_000);
  expect(cluster.model.requests.length - requests).toBe(2);
  const last = cluster.model.requests.at(-1)!.body.messages as { role: string; content: string }[];
  expect(last.at(-1)).toMatchObject({ role: 'user', content: 'never mind, what is 2+2?' });
  // What the first turn said and its denied tool round are kept for the next.
  expect(last.some((message) => message.role === 'assistant' && /Let me write that down/.test(message.content ?? ''))).toBe(true);
  expect(last.some((message) => message.role === 'tool' && /denied/i.test(String(message.content)))).toBe(true);
});
