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
export function userRoutes(users: Users): ApiModule {
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
      handler: async ({ body }) => toUserView(await users.create(body)),
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
      handler: async ({ principal, params, body }) => toUserView(await users.update(principal.userId, params.id, body)),
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
      handler: async ({ principal, params }) => void (await users.remove(principal.userId, params.id)),
    });
  };
}
