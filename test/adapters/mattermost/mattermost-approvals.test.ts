import { request } from '../../helpers/http';
import { removeTempDirs } from '../../helpers/temp-dir';
import { startMattermostHarness, waitForBotPost, waitForButtons, type MattermostHarness } from './mattermost-harness';

/**
 * Approval policies with Mattermost approvers (issue 30 on Mattermost): `mattermost_group` (a user
 * group's members) and `mattermost_channel_admins` (the channel's admins), asked of the fake server
 * when the click arrives; when it cannot say, the click is refused with a note (fail-closed).
 */
describe('Mattermost approvers', () => {
  let h: MattermostHarness;
  let ops = '';
  const ADA = 'user00000000000000000000001';
  const GRACE = 'grace00000000000000000000a';
  const LINUS = 'linus00000000000000000000a';
  const MARGARET = 'margaret000000000000000000';
  const ONCALL = 'grp0oncall0000000000000001';
  const DBA = 'grp0dba0000000000000000001';

  beforeAll(async () => {
    h = await startMattermostHarness();
    for (const [id, username] of [
      [GRACE, 'grace'],
      [LINUS, 'linus'],
      [MARGARET, 'margaret'],
    ] as const)
      h.mattermost.addUser({ id, username });
    ops = h.mattermost.openChannel('ops-approvals');
    h.mattermost.groups.set(ONCALL, { id: ONCALL, name: 'sre-oncall', display_name: 'SRE on call', members: new Set([GRACE]) });
    h.mattermost.groups.set(DBA, { id: DBA, name: 'dba', display_name: 'DBA', members: new Set([GRACE]) });
    h.mattermost.channelAdmins.add(`${ops}:${MARGARET}`);
  }, 30_000);

  afterAll(async () => {
    await h?.stop();
    removeTempDirs();
  });

  /** A workflow whose `save_note` needs `approvers`, started by Ada's mention of `keyword` in the channel: its buttons. */
  async function askUnder(keyword: string, approvers: Record<string, unknown>) {
    const workflow = {
      name: `${keyword}-notes`,
      system_prompt: 'You keep notes.',
      tool_list: 'save_note',
      triggers: { keywords: [keyword] },
      binding_channels: ['mattermost'],
      approvals: [{ tools: ['save_note'], approvers }],
    };
    const admin = { authorization: `Bearer ${h.adminToken}`, 'content-type': 'application/json' };
    const created = await request(`${h.api}/assistant/workflows`, { method: 'POST', headers: admin, body: JSON.stringify(workflow) });
    expect(created.status).toBe(201);
    h.tools.runs.length = 0;
    h.provider.rounds = [{ calls: [{ id: `call-${keyword}`, name: 'save_note', arguments: JSON.stringify({ text: keyword }) }] }, { text: ['Saved', '.'] }];
    const mention = h.mattermost.userPosts(ADA, ops, `@switchboard please save a ${keyword} note`);
    const asked = await waitForButtons(h.mattermost, ops);
    expect(asked.root_id).toBe(mention.id);
    const allow = (asked.props.attachments[0].actions as any[]).find((action) => action.integration.context.action === 'allow');
    return { asked, allow: (userId: string) => h.mattermost.click(asked.id, allow.id, userId) };
  }

  /** The buttons are answered and the turn done: forgets this question's post for the next test. */
  async function settle(asked: { id: string }) {
    await waitForBotPost(h.mattermost, ops, 'Saved.');
    h.mattermost.posts.delete(asked.id);
    for (const post of h.mattermost.botPosts(ops)) h.mattermost.posts.delete(post.id);
  }

  it('mattermost_group by name: a non-member is refused privately and the buttons stay; a member approves and the tool runs once', async () => {
    const { asked, allow } = await askUnder('oncall', { mattermost_group: '@sre-oncall' });
    expect(JSON.stringify(asked.props)).toContain('Mattermost group @sre-oncall');
    const refused = await allow(LINUS);
    expect(refused.status).toBe(200);
    expect(refused.body).toEqual({ ephemeral_text: 'You are not among the approvers (Mattermost group @sre-oncall).' });
    expect(h.tools.runs).toEqual([]);
    const approved = await allow(GRACE);
    expect(approved.body.update.props.attachments[0].text).toContain('chosen by @grace');
    await settle(asked);
    expect(h.tools.runs).toEqual([{ tool: 'save_note', input: { text: 'oncall' } }]);
    expect(h.mattermost.calls.some((call) => call.path === `/api/v4/groups/${ONCALL}/members`)).toBe(true);
  });

  it('mattermost_channel_admins: a member who is not a channel admin is refused; a channel admin approves', async () => {
    const { asked, allow } = await askUnder('adminnote', { mattermost_channel_admins: true });
    const refused = await allow(LINUS);
    expect(refused.body.ephemeral_text).toBe('You are not among the approvers (the channel admins).');
    expect(h.tools.runs).toEqual([]);
    const approved = await allow(MARGARET);
    expect(approved.body.update.props.attachments[0].text).toContain('chosen by @margaret');
    await settle(asked);
    expect(h.tools.runs).toEqual([{ tool: 'save_note', input: { text: 'adminnote' } }]);
    expect(h.mattermost.calls.some((call) => call.path === `/api/v4/channels/${ops}/members/${MARGARET}`)).toBe(true);
  });

  it('when Mattermost will not say (the bot may not read groups), the click is refused with a note, the tool does not run, and an approver decides once it can', async () => {
    const { asked, allow } = await askUnder('dbanote', { mattermost_group: DBA, mattermost_channel_admins: true });
    h.mattermost.forbidMembership = true;
    const refused = await allow(GRACE);
    expect(refused.status).toBe(200);
    expect(refused.body.ephemeral_text).toMatch(
      /^Could not check whether you may approve \(Mattermost did not .*appropriate permissions.*\); the click is refused\.$/,
    );
    expect(refused.body.update).toBeUndefined();
    expect(h.tools.runs).toEqual([]);
    h.mattermost.forbidMembership = false; // a failure is never kept: the next click asks again
    const approved = await allow(GRACE);
    expect(approved.body.update.props.attachments[0].text).toContain('chosen by @grace');
    await settle(asked);
    expect(h.tools.runs).toEqual([{ tool: 'save_note', input: { text: 'dbanote' } }]);
  });
});
