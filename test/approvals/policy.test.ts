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
    // An MCP tool as the model names it (`<server>__<tool>`) matches by its pinned name too.
    ['github__merge_pr', 0],
    ['github__list_issues', 1],
    ['run_command', 2],
    ['current_time', null],
    ['write_files', null],
    ['github', null],
  ])('%s → policy %s', (tool, index) => {
    expect(policyFor(policies, tool)?.index ?? null).toBe(index);
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
    expect(await checkApprover(both, clicker, users, halfBroken)).toEqual({ ok: false, reason: expect.stringContaining('403 forbidden') });
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
});
