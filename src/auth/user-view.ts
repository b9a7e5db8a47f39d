import { z } from 'zod';
import { ROLES } from '../core/principal';
import type { UserRecord } from '../db/models/user';

/** The public shape of a user (decisions.md §2): never the password hash. */
export const userViewSchema = z
  .object({
    id: z.uuid(),
    username: z.string(),
    email: z.string(),
    role: z.enum(ROLES),
    is_active: z.boolean(),
    created_at: z.iso.datetime(),
  })
  .meta({ id: 'User' });

export type UserView = z.infer<typeof userViewSchema>;

export function toUserView(user: UserRecord): UserView {
  return {
    id: user.id,
    username: user.username,
    email: user.email,
    role: user.role,
    is_active: user.is_active,
    created_at: new Date(user.created_at).toISOString(),
  };
}
