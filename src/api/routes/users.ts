import { NO_AUDIT, type AuditSink } from '../../core/audit';
import { userActor } from '../../core/actor';
import { z } from 'zod';
import { toUserView, userViewSchema } from '../../auth/user-view';
import type { Users } from '../../auth/users';
import { ROLES } from '../../core/principal';
import type { ApiModule } from '../app';
import { listQueryShape, offsetFromCursor, toPage } from '../pagination';
import { listPage } from '../schemas/envelope';
import { emailSchema, newPasswordSchema, usernameSchema } from './auth';

const userId = z.object({ id: z.uuid() });

/** Admin user management (decisions.md §2). */
export function userRoutes(users: Users, audit: AuditSink = NO_AUDIT): ApiModule {
  return (api) => {
    api.add({
      method: 'get',
      path: '/users',
      summary: 'List users',
      tags: ['users'],
      access: 'admin',
      query: z.object(listQueryShape),
      response: { status: 200, description: 'Users, oldest first.', data: listPage(userViewSchema) },
      handler: async ({ query }) => {
        const offset = offsetFromCursor(query.cursor);
        const { rows, total } = await users.list(offset, query.limit);
        return toPage(rows.map(toUserView), offset, total);
      },
    });

    api.add({
      method: 'post',
      path: '/users',
      summary: 'Create a user',
      tags: ['users'],
      access: 'admin',
      body: z.strictObject({
        username: usernameSchema,
        email: emailSchema,
        password: newPasswordSchema,
        role: z.enum(ROLES).default('user'),
      }),
      errors: ['CONFLICT'],
      response: { status: 201, description: 'The new user.', data: userViewSchema },
      handler: async ({ principal, body }) => {
        const created = toUserView(await users.create(body));
        audit.record({
          kind: 'user.created',
          actor: userActor(principal),
          subject: created.id,
          action: `role:${created.role}`,
          details: { username: created.username, role: created.role },
        });
        return created;
      },
    });

    api.add({
      method: 'patch',
      path: '/users/{id}',
      summary: "Change a user's role or active flag",
      description: 'An admin cannot demote or deactivate themself (403).',
      tags: ['users'],
      access: 'admin',
      params: userId,
      body: z
        .strictObject({ role: z.enum(ROLES).optional(), is_active: z.boolean().optional() })
        .refine((changes) => changes.role !== undefined || changes.is_active !== undefined, 'give role, is_active or both'),
      errors: ['NOT_FOUND'],
      response: { status: 200, description: 'The changed user.', data: userViewSchema },
      handler: async ({ principal, params, body }) => {
        const changed = toUserView(await users.update(principal.userId, params.id, body));
        const action = [
          body.role !== undefined ? `role:${body.role}` : null,
          body.is_active !== undefined ? (body.is_active ? 'activated' : 'deactivated') : null,
        ]
          .filter(Boolean)
          .join(',');
        audit.record({ kind: 'user.changed', actor: userActor(principal), subject: changed.id, action, details: { username: changed.username, ...body } });
        return changed;
      },
    });

    api.add({
      method: 'delete',
      path: '/users/{id}',
      summary: 'Delete a user (with their sessions and API keys)',
      description: 'An admin cannot delete themself (403).',
      tags: ['users'],
      access: 'admin',
      params: userId,
      errors: ['NOT_FOUND'],
      response: { status: 204, description: 'Deleted.' },
      handler: async ({ principal, params }) => {
        await users.remove(principal.userId, params.id);
        audit.record({ kind: 'user.deleted', actor: userActor(principal), subject: params.id, action: 'deleted' });
      },
    });
  };
}
