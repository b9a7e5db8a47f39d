import { z } from 'zod';
import { userActor } from '../../core/actor';
import type { ApprovalService } from '../../approvals/approval-service';
import { APPROVAL_STATES } from '../../approvals/approval-store';
import { approvalPolicySchema } from '../../approvals/policy-schema';
import type { ApiModule } from '../app';
import { confirmToolBody } from '../schemas/sessions';
import { listPage } from '../schemas/envelope';

const progressSchema = z.object({
  approvers: z.string(),
  quorum: z.int(),
  approvals: z.int(),
  approved_by: z.array(z.string()),
  escalated: z.boolean(),
  expires_at: z.iso.datetime(),
  text: z.string(),
});

const approvalSchema = z
  .object({
    id: z.uuid().describe('The approval, also the `confirmation_id` of its `tool_confirm_request`.'),
    session_id: z.uuid(),
    turn_id: z.uuid(),
    tool: z.string(),
    parameters: z.record(z.string(), z.unknown()),
    message: z.string(),
    workflow: z.string().nullable(),
    policy: z.object({ index: z.int().describe("Its place in the workflow's `approvals` list.") }).and(approvalPolicySchema),
    requester: z.string().describe('Who asked: a user id, or `<channel>:<contact id>`.'),
    state: z.enum(APPROVAL_STATES),
    action: z.string().nullable().describe('The outcome: `allow`, `allow_all`, `deny`, `disable`, `forbid_all`, `cancel`.'),
    progress: progressSchema,
    votes: z.array(z.object({ voter: z.string(), name: z.string(), action: z.string(), escalated: z.boolean(), at: z.iso.datetime() })),
    created_at: z.iso.datetime(),
    decided_at: z.iso.datetime().nullable(),
    decided_by: z.string().nullable(),
  })
  .meta({ id: 'Approval' });

const clickSchema = z.object({
  id: z.uuid(),
  counted: z.boolean(),
  decided: z.string().nullable().describe('The outcome when this click decided it (`allow`, `allow_all`, `deny`…), else null.'),
  progress: progressSchema,
});

/** `GET /approvals`, `POST /approvals/{id}`: approvals by the right people (issue 30). */
export function approvalRoutes(approvals: ApprovalService): ApiModule {
  return (api) => {
    api.add({
      method: 'get',
      path: '/approvals',
      summary: 'The approvals you may decide (as a hub user, by role or username), newest first',
      description: 'Across sessions. `state` defaults to `pending`; `all` lists every state.',
      tags: ['approvals'],
      access: 'user',
      query: z.object({
        state: z.enum([...APPROVAL_STATES, 'all']).default('pending'),
        limit: z.coerce.number().int().min(1).max(100).default(20),
      }),
      response: { status: 200, description: 'Approvals, newest first (one page).', data: listPage(approvalSchema) },
      handler: async ({ principal, query }) => {
        const items = await approvals.listFor(principal.userId, query.state === 'all' ? null : query.state, query.limit);
        return { items, next_cursor: null, has_more: false, total: items.length };
      },
    });
    api.add({
      method: 'post',
      path: '/approvals/{id}',
      summary: 'Decide an approval: allow (counts toward the quorum), deny…',
      description:
        'The six actions of `tool_confirm`. Approving actions count once per person toward the quorum; any other action by an approver decides at once. ' +
        '403 FORBIDDEN when you may not approve (not among the approvers, or your own request without `self_approval`); 409 CONFLICT when it is no longer pending.',
      tags: ['approvals'],
      access: 'user',
      params: z.object({ id: z.uuid() }),
      body: confirmToolBody,
      errors: ['APPROVAL_NOT_FOUND', 'FORBIDDEN', 'CONFLICT'],
      response: { status: 200, description: 'What the click did.', data: clickSchema },
      handler: async ({ principal, params, body }) => {
        const { approval } = await approvals.click(params.id, body.action, userActor(principal));
        return { id: params.id, ...approval };
      },
    });
  };
}
