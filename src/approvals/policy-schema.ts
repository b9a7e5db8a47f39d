import { z } from 'zod';

/** Limits of an approval policy (docs/guides/approvals.md). */
export const APPROVAL_LIMITS = {
  /** Policies per workflow. */
  policies: 50,
  /** Distinct approvers a policy may require. */
  maxQuorum: 20,
  /** Shortest and longest wait for approvers, seconds. */
  minTimeoutS: 1,
  maxTimeoutS: 7 * 86_400,
  /** Default wait: 15 minutes. */
  defaultTimeoutS: 900,
} as const;

/** A tool name or glob: letters, digits, `_`, `-`, `.` and the wildcards `*` and `?`. */
const TOOL_GLOB = /^[A-Za-z0-9_.*?-]{1,128}$/;

/** A Mattermost user group: its id (26 characters) or its name, with or without the `@` it is mentioned by. */
const MATTERMOST_GROUP = /^@?[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/**
 * Who may approve: hub users (by role or username: web, CLI, API) and people on a chat platform,
 * resolved when their click arrives (a Slack user group's members, a Telegram chat's administrators,
 * a Mattermost group's members or a Mattermost channel's admins).
 */
export const approverSetSchema = z
  .strictObject({
    roles: z
      .array(z.enum(['admin', 'user']))
      .max(10)
      .default([])
      .describe('Hub users with one of these roles.'),
    users: z.array(z.string().min(1).max(64)).max(100).default([]).describe('Hub usernames.'),
    slack_usergroup: z
      .string()
      .regex(/^S[A-Z0-9]{2,30}$/, 'a Slack user group id (S0123ABCD)')
      .optional()
      .describe("A Slack user group's id: its members at click time (usergroups.users.list)."),
    telegram_chat_admins: z.boolean().default(false).describe('The administrators of the Telegram chat the turn runs in, at click time (getChatMember).'),
    mattermost_group: z
      .string()
      .regex(MATTERMOST_GROUP, 'a Mattermost group id or name')
      .optional()
      .describe("A Mattermost user group's id or name: its members at click time (GET /api/v4/groups/{id}/members)."),
    mattermost_channel_admins: z
      .boolean()
      .optional()
      .describe('The admins of the Mattermost channel the turn runs in, at click time (GET /api/v4/channels/{id}/members/{user}: channel_admin).'),
  })
  .refine((set) => !onlyUsers(set) || set.users.length > 0, {
    message: 'Name at least one approver: roles, users, slack_usergroup, telegram_chat_admins, mattermost_group or mattermost_channel_admins.',
  })
  .meta({ id: 'ApproverSet' });
export type ApproverSet = z.infer<typeof approverSetSchema>;

export const approvalPolicySchema = z
  .strictObject({
    tools: z
      .array(z.string().regex(TOOL_GLOB, 'a tool name or glob (`*`, `?`)'))
      .min(1)
      .max(100)
      .describe('Tool names or globs (built-in and MCP tools alike).'),
    approvers: approverSetSchema,
    quorum: z.int().min(1).max(APPROVAL_LIMITS.maxQuorum).default(1).describe('Distinct approvers needed.'),
    self_approval: z.boolean().default(false).describe("Whether the requester's own click may count."),
    timeout_s: z.int().min(APPROVAL_LIMITS.minTimeoutS).max(APPROVAL_LIMITS.maxTimeoutS).default(APPROVAL_LIMITS.defaultTimeoutS),
    on_timeout: z.enum(['deny', 'escalate']).default('deny').describe('deny, or escalate: ask `escalate_to` for one more timeout.'),
    escalate_to: approverSetSchema.optional(),
  })
  .refine((policy) => policy.on_timeout !== 'escalate' || policy.escalate_to !== undefined, {
    message: '`on_timeout: escalate` needs `escalate_to` approvers.',
    path: ['escalate_to'],
  })
  .refine((policy) => !onlyUsers(policy.approvers) || policy.approvers.users.length >= policy.quorum, {
    message: 'The quorum is larger than the approvers named (only `users`).',
    path: ['quorum'],
  })
  .meta({ id: 'ApprovalPolicy' });
export type ApprovalPolicy = z.infer<typeof approvalPolicySchema>;

export const approvalPoliciesSchema = z
  .array(approvalPolicySchema)
  .max(APPROVAL_LIMITS.policies)
  .describe('Who must approve which tools (first matching policy applies); a tool under none keeps the requester’s confirmation.');

/** Whether `set` names no approver but (perhaps) hub usernames. */
function onlyUsers(set: {
  roles: readonly string[];
  slack_usergroup?: string;
  telegram_chat_admins: boolean;
  mattermost_group?: string;
  mattermost_channel_admins?: boolean;
}): boolean {
  const platform =
    set.slack_usergroup !== undefined || set.telegram_chat_admins || set.mattermost_group !== undefined || set.mattermost_channel_admins === true;
  return set.roles.length === 0 && !platform;
}
