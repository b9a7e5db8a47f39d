import { policyFor } from '../../src/approvals/policy-match';
import { approvalPoliciesSchema } from '../../src/approvals/policy-schema';
import { checkApprover } from '../../src/approvals/approvers';

/** Which policy governs a tool (names and globs, MCP tools alike) and who may approve. */
const policies = approvalPoliciesSchema.parse([
  { tools: ['write_file', 'github.merge_*'], approvers: { roles: ['admin'] } },
  { tools: ['github.*'], approvers: { users: ['alice'] }, quorum: 1 },
  { tools: ['run_?ommand'], approvers: { slack_usergroup: 'S0123ABCD' } },
]);

describe('policyFor', () => {
  it.each([
    ['write_file', 0],
    ['github.merge_pr', 0],
    ['run_command', 2],
    ['current_time', null],
    ['write_files', null],
    ['github', null],
  ])('%s → policy %s', (tool, index) => {
    expect(policyFor(policies, tool)?.index ?? null).toBe(index);
  });

  it("matches an MCP tool by its pinned name from the MCP hub's table, never by splitting the model's name", () => {
    expect(policyFor(policies, 'github__merge_pr', { server: 'github', tool: 'merge_pr' })?.index).toBe(0);
    expect(policyFor(policies, 'github__list_issues', { server: 'github', tool: 'list_issues' })?.index).toBe(1);
    // `gh.merge.pr` is sanitised to `gh__merge_pr` for the model; only its origin names it.
    const [dotted] = approvalPoliciesSchema.parse([{ tools: ['gh.merge.pr'], approvers: { roles: ['admin'] } }]);
    expect(policyFor([dotted!], 'gh__merge_pr', { server: 'gh', tool: 'merge.pr' })?.index).toBe(0);
    expect(policyFor([dotted!], 'gh__merge_pr')).toBeNull();
    // A built-in tool whose name happens to contain `__` is matched by that name alone.
    expect(policyFor(policies, 'github__merge_pr')).toBeNull();
  });

  it('treats every other character literally (a dot is a dot)', () => {
    const [policy] = approvalPoliciesSchema.parse([{ tools: ['a.b'], approvers: { roles: ['admin'] } }]);
    expect(policyFor([policy!], 'axb')).toBeNull();
  });
});

describe('checkApprover', () => {
  const users = async (id: string) =>
    id === 'u1' ? { username: 'Alice', role: 'user', isActive: true } : id === 'u2' ? { username: 'root', role: 'admin', isActive: false } : null;
  const set = approvalPoliciesSchema.parse([{ tools: ['x'], approvers: { users: ['alice'], roles: ['admin'], slack_usergroup: 'S0123ABCD' } }])[0]!.approvers;

  it('accepts hub users by username (any case) or role, never an inactive one', async () => {
    expect(await checkApprover(set, { kind: 'user', id: 'u1' }, users)).toEqual({ ok: true, hubUser: 'Alice' });
    expect((await checkApprover(set, { kind: 'user', id: 'u2' }, users)).ok).toBe(false);
    expect((await checkApprover(set, { kind: 'user', id: 'nobody' }, users)).ok).toBe(false);
  });

  it('asks the clicker’s channel about its group, and refuses when it cannot say (fail-closed)', async () => {
    const member = { isMember: async (group: string) => group === 'S0123ABCD' };
    expect(await checkApprover(set, { kind: 'contact', channel: 'slack', id: 'U1' }, users, member)).toEqual({ ok: true, hubUser: null });
    expect((await checkApprover(set, { kind: 'contact', channel: 'slack', id: 'U1' }, users)).ok).toBe(false);
    expect((await checkApprover(set, { kind: 'contact', channel: 'telegram', id: '7' }, users, member)).ok).toBe(false);
    const broken = { isMember: () => Promise.reject(new Error('ratelimited')) };
    expect(await checkApprover(set, { kind: 'contact', channel: 'slack', id: 'U1' }, users, broken)).toEqual({
      ok: false,
      reason: expect.stringContaining('ratelimited'),
      hubUser: null,
    });
  });

  it('asks a Mattermost clicker about the group and the channel admins; a group named like the admins is still a group', async () => {
    const both = approvalPoliciesSchema.parse([{ tools: ['x'], approvers: { mattermost_group: 'chat_admins', mattermost_channel_admins: true } }])[0]!
      .approvers;
    const asked: string[] = [];
    const groups = (answer: (group: string) => boolean) => ({ isMember: async (group: string) => (asked.push(group), answer(group)) });
    const clicker = { kind: 'contact' as const, channel: 'mattermost', id: 'mmuser' };
    expect(
      (
        await checkApprover(
          both,
          clicker,
          users,
          groups(() => false),
        )
      ).ok,
    ).toBe(false);
    expect(asked).toEqual(['group:chat_admins', 'chat_admins']);
    expect(
      (
        await checkApprover(
          both,
          clicker,
          users,
          groups((group) => group === 'chat_admins'),
        )
      ).ok,
    ).toBe(true);
    // One of them cannot say and the other says no: refused, saying why; one says yes: approved.
    const halfBroken = { isMember: async (group: string) => (group === 'chat_admins' ? false : Promise.reject(new Error('403 forbidden'))) };
    expect(await checkApprover(both, clicker, users, halfBroken)).toEqual({ ok: false, reason: expect.stringContaining('403 forbidden'), hubUser: null });
    // A Slack policy says nothing about Mattermost clickers.
    expect(
      (
        await checkApprover(
          set,
          clicker,
          users,
          groups(() => true),
        )
      ).ok,
    ).toBe(false);
  });

  it('takes a Mattermost group by id or name, and refuses other shapes', () => {
    for (const group of ['sre-oncall', '@sre-oncall', 'abcdefghij0123456789abcdef'])
      expect(approvalPoliciesSchema.safeParse([{ tools: ['x'], approvers: { mattermost_group: group } }]).success).toBe(true);
    for (const group of ['', 'two words', '@', 'x'.repeat(70)])
      expect(approvalPoliciesSchema.safeParse([{ tools: ['x'], approvers: { mattermost_group: group } }]).success).toBe(false);
    expect(approvalPoliciesSchema.safeParse([{ tools: ['x'], approvers: { mattermost_channel_admins: false } }]).success).toBe(false);
    expect(approvalPoliciesSchema.safeParse([{ tools: ['x'], approvers: { mattermost_channel_admins: true } }]).success).toBe(true);
  });

  it('checks a platform user bound to a hub user as that user first, naming them for the audit (Telegram, Mattermost alike)', async () => {
    const usersOnly = approvalPoliciesSchema.parse([{ tools: ['x'], approvers: { users: ['alice'] } }])[0]!.approvers;
    const telegramAlice = { kind: 'contact' as const, channel: 'telegram', id: '4242' };
    expect(await checkApprover(usersOnly, telegramAlice, users, undefined, 'u1')).toEqual({ ok: true, hubUser: 'Alice' });
    expect((await checkApprover(usersOnly, telegramAlice, users)).ok).toBe(false);
    // Bound to an inactive admin: not an approver by role; the group check still applies.
    const member = { isMember: async () => true };
    expect(await checkApprover(set, { kind: 'contact', channel: 'slack', id: 'U9' }, users, member, 'u2')).toEqual({ ok: true, hubUser: null });
    // Bound to someone the policy does not name: refused, and the audit names who it was.
    const mattermost = { kind: 'contact' as const, channel: 'mattermost', id: 'mm1' };
    const rootOnly = approvalPoliciesSchema.parse([{ tools: ['x'], approvers: { users: ['root'] } }])[0]!.approvers;
    expect(await checkApprover(rootOnly, mattermost, users, undefined, 'u1')).toEqual({ ok: false, reason: expect.any(String), hubUser: 'Alice' });
  });
});
