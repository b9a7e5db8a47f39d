import { decodeCallbackData } from '../../../adapters/telegram/callback-data';
import { auditRows } from '../../helpers/audit';
import { jsonBody, request } from '../../helpers/http';
import { removeTempDirs } from '../../helpers/temp-dir';
import { clickUpdate, forChat, startTelegramHarness, textUpdate, waitForText, WEBHOOK_SECRET, type TelegramHarness } from './telegram-harness';

/**
 * Approvals in Telegram groups (issue 30): the chat's administrators at click time approve
 * (`getChatMember`); the requester and other members are refused with an alert; a failure to ask
 * Telegram refuses (fail-closed); a timeout denies.
 */
let h: TelegramHarness;
const GROUP = -4242;

beforeAll(async () => {
  h = await startTelegramHarness('webhook');
  const workflow = {
    name: 'ops',
    tool_list: 'lookup,save_note',
    binding_channels: ['telegram'],
    triggers: { keywords: ['deploy'] },
    approvals: [
      { tools: ['save_note'], approvers: { telegram_chat_admins: true } },
      { tools: ['lookup'], approvers: { telegram_chat_admins: true }, timeout_s: 1 },
    ],
  };
  expect((await request(`${h.api}/assistant/workflows`, jsonBody(workflow, { authorization: `Bearer ${h.adminToken}` }))).status).toBe(201);
});

afterAll(async () => {
  await h.service.stop();
  await h.telegram.stop();
  removeTempDirs();
});

const deliver = (update: unknown) => request(`${h.api}/channels/telegram/webhook`, jsonBody(update, { 'x-telegram-bot-api-secret-token': WEBHOOK_SECRET }));

/** User 77 asks in the group; resolves the question the bot posted with its buttons. */
async function ask(text: string) {
  const before = h.telegram.calls.length;
  await deliver(textUpdate(GROUP, text));
  return h.telegram.waitFor(
    (call) => h.telegram.calls.indexOf(call) >= before && forChat(GROUP)(call) && call.method === 'sendMessage' && call.params.reply_markup !== undefined,
  );
}

async function click(asked: any, userId: number, action = 'allow') {
  const button = asked.params.reply_markup.inline_keyboard.flat().find((entry: any) => decodeCallbackData(entry.callback_data)?.action === action);
  const update = clickUpdate({ message_id: asked.result.message_id, chat_id: GROUP, text: asked.params.text }, button.callback_data);
  update.callback_query.from = { id: userId, is_bot: false, first_name: `User${userId}` };
  update.callback_query.message.chat = { id: GROUP, type: 'group', title: 'Team' };
  expect((await deliver(update)).status).toBe(200);
  return h.telegram.waitFor((call) => call.method === 'answerCallbackQuery' && call.params.callback_query_id === update.callback_query.id);
}

it('the chat’s administrators approve; the requester and other members get an alert and change nothing', async () => {
  h.telegram.chatAdmins.set(GROUP, [77, 99]);
  h.provider.rounds = [{ calls: [{ id: 'tg-save', name: 'save_note', arguments: JSON.stringify({ text: 'ship it' }) }] }, { text: ['Noted.'] }];
  const asked = await ask('deploy note please');
  expect(asked.params.text).toContain('Waiting for approval by the chat admins (0 of 1)');
  const own = await click(asked, 77);
  expect(own.params).toMatchObject({ show_alert: true, text: expect.stringContaining('Your own request') });
  const member = await click(asked, 55);
  expect(member.params).toMatchObject({ show_alert: true, text: expect.stringContaining('not among the approvers') });
  expect(h.tools.runs).toHaveLength(0);
  const admin = await click(asked, 99);
  expect(admin.params.show_alert).toBeUndefined();
  await waitForText(h.telegram, GROUP, /Noted\./);
  expect(h.tools.runs).toEqual([{ tool: 'save_note', input: { text: 'ship it' } }]);
  const rows = await auditRows(h.api, h.adminToken, { kind: 'approval.click' }, 3);
  expect(rows.map((row) => `${row.actor.key}:${row.action}`).sort()).toEqual(['telegram:55:refused', 'telegram:77:refused', 'telegram:99:counted']);
});

it('refuses when Telegram cannot say (fail-closed), and a timeout denies', async () => {
  h.telegram.chatMemberError = 'Bad Request: chat not found';
  h.provider.rounds = [{ calls: [{ id: 'tg-lookup', name: 'lookup', arguments: JSON.stringify({ word: 'x' }) }] }, { text: ['Without it.'] }];
  const asked = await ask('deploy lookup');
  const refused = await click(asked, 12);
  expect(refused.params).toMatchObject({ show_alert: true, text: expect.stringContaining('Telegram did not say whether you administer this chat') });
  // The timeout is said in the conversation, and the model got the call back denied.
  await waitForText(h.telegram, GROUP, /Not approved: no approver approved "lookup" in time/);
  await waitForText(h.telegram, GROUP, /Without it\./);
  expect(h.tools.runs).not.toContainEqual({ tool: 'lookup', input: { word: 'x' } });
  const [decided] = await auditRows(h.api, h.adminToken, { kind: 'approval.decided', actor: 'system:timeout' });
  expect(decided).toMatchObject({ action: 'timed_out', subject: 'lookup', details: { policy: { index: 1, tools: ['lookup'] } } });
});
