import { z } from 'zod';
import { userActor } from '../../core/actor';
import { NO_AUDIT, type AuditSink } from '../../core/audit';
import { AppError } from '../../core/errors';
import type { Users } from '../../auth/users';
import { IDENTITY_CHANNELS, PLATFORM_USER_ID, type PlatformIdentities } from '../../approvals/platform-identities';
import type { ApiModule } from '../app';

const identitySchema = z
  .object({
    channel: z.enum(IDENTITY_CHANNELS),
    platform_user_id: z.string().describe('The Slack user id (`U0123ABCD`), Telegram user id or Mattermost user id.'),
    user_id: z.uuid(),
    created_at: z.iso.datetime(),
  })
  .meta({ id: 'PlatformIdentity' });

const platformUserId = z.string().regex(PLATFORM_USER_ID, 'a platform user id: letters, digits, `_ . @ -`, at most 128');
const userId = z.object({ id: z.uuid() });

/**
 * Chat platform users bound to hub users (issue 30): an approval policy's `users:` and `roles:`
 * count the clicks of a bound Slack, Telegram or Mattermost user. Admins only.
 */
export function identityRoutes(identities: PlatformIdentities, users: Users, audit: AuditSink = NO_AUDIT): ApiModule {
  const requireUser = async (id: string) => {
    const user = await users.findById(id);
    if (!user) throw new AppError('NOT_FOUND', 'No such user.');
    return user;
  };
  return (api) => {
    api.add({
      method: 'get',
      path: '/users/{id}/identities',
      summary: "A user's chat platform identities",
      tags: ['users'],
      access: 'admin',
      params: userId,
      errors: ['NOT_FOUND'],
      response: { status: 200, description: 'The platform user ids bound to this hub user.', data: z.array(identitySchema) },
      handler: async ({ params }) => {
        await requireUser(params.id);
        return identities.list(params.id);
      },
    });
    linkRoute(api, identities, requireUser, audit);
    unlinkRoute(api, identities, requireUser, audit);
  };
}

type Api = Parameters<ApiModule>[0];
type RequireUser = (id: string) => Promise<{ id: string; username: string }>;

function linkRoute(api: Api, identities: PlatformIdentities, requireUser: RequireUser, audit: AuditSink): void {
  api.add({
    method: 'post',
    path: '/users/{id}/identities',
    summary: 'Bind a chat platform user to this hub user',
    description:
      "Their clicks on approval buttons in that chat count as this hub user's (`users:` and `roles:` of approval policies), and the audit names this user. " +
      'A platform user belongs to one hub user: 409 CONFLICT when bound to another.',
    tags: ['users'],
    access: 'admin',
    params: userId,
    body: z.strictObject({ channel: z.enum(IDENTITY_CHANNELS), platform_user_id: platformUserId }),
    errors: ['NOT_FOUND', 'CONFLICT'],
    response: { status: 201, description: 'Bound (also when it already was).', data: identitySchema },
    handler: async ({ principal, params, body }) => {
      const user = await requireUser(params.id);
      const bound = await identities.link(user.id, body.channel, body.platform_user_id, principal.userId);
      audit.record({
        kind: 'user.changed',
        actor: userActor(principal),
        subject: user.id,
        action: `identity_linked:${body.channel}`,
        details: { username: user.username, channel: body.channel, platform_user_id: body.platform_user_id },
      });
      return bound;
    },
  });
}

function unlinkRoute(api: Api, identities: PlatformIdentities, requireUser: RequireUser, audit: AuditSink): void {
  api.add({
    method: 'delete',
    path: '/users/{id}/identities/{channel}/{platform_user_id}',
    summary: 'Unbind a chat platform user from this hub user',
    tags: ['users'],
    access: 'admin',
    params: z.object({ id: z.uuid(), channel: z.enum(IDENTITY_CHANNELS), platform_user_id: platformUserId }),
    errors: ['NOT_FOUND'],
    response: { status: 204, description: 'Unbound.' },
    handler: async ({ principal, params }) => {
      const user = await requireUser(params.id);
      if (!(await identities.unlink(user.id, params.channel, params.platform_user_id)))
        throw new AppError('NOT_FOUND', `${params.channel}:${params.platform_user_id} is not bound to this user.`);
      audit.record({
        kind: 'user.changed',
        actor: userActor(principal),
        subject: user.id,
        action: `identity_unlinked:${params.channel}`,
        details: { username: user.username, channel: params.channel, platform_user_id: params.platform_user_id },
      });
    },
  });
}
