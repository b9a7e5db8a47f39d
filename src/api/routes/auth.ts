import { z } from 'zod';
import type { Sessions } from '../../auth/sessions';
import { tokenPairSchema } from '../../auth/sessions';
import { toUserView, userViewSchema } from '../../auth/user-view';
import type { Users } from '../../auth/users';
import { AppError } from '../../core/errors';
import type { ApiModule } from '../app';
import {
  clearRefreshCookie,
  cookieRefreshToken,
  DEFAULT_REFRESH_COOKIE,
  deliverPair,
  REFRESH_TRANSPORT_HEADER,
  type RefreshCookieOptions,
} from '../refresh-cookie';

/** decisions.md §2: 3–64 of [A-Za-z0-9_-]; no `@`, so a login name is never mistaken for an email. */
export const usernameSchema = z
  .string()
  .min(3)
  .max(64)
  .regex(/^[A-Za-z0-9_-]+$/, 'letters, digits, "_" or "-" only');
export const emailSchema = z.email().max(320);
export const newPasswordSchema = z.string().min(8).max(128);
/** Presented passwords are capped too, so nobody makes the server hash megabytes. */
const presentedPassword = z.string().min(1).max(1024);
const refreshTokenSchema = z.string().min(1).max(512);

/** The token pair as answered: `refresh_token` is null when it went into the cookie (REFRESH_TRANSPORT_HEADER). */
export const deliveredPairSchema = tokenPairSchema.extend({
  refresh_token: z
    .string()
    .nullable()
    .describe(
      `The refresh token; null when the request sent \`${REFRESH_TRANSPORT_HEADER}: cookie\` (it is then an HttpOnly cookie for the refresh endpoint).`,
    ),
});

const COOKIE_NOTE = ` A browser client may send \`${REFRESH_TRANSPORT_HEADER}: cookie\`: the refresh token then comes as an HttpOnly, SameSite=Strict cookie scoped to \`/api/v1/auth/refresh\`, and \`refresh_token\` is null in the answer.`;

export function authRoutes(deps: { sessions: Sessions; users: Users; refreshCookie?: RefreshCookieOptions }): ApiModule {
  const { sessions, users } = deps;
  const cookie = deps.refreshCookie ?? DEFAULT_REFRESH_COOKIE;
  return (api) => {
    api.add({
      method: 'post',
      path: '/auth/register',
      summary: 'Create an account (the first one becomes admin) and log in',
      description: COOKIE_NOTE.trim(),
      tags: ['auth'],
      access: 'public',
      rateLimit: 'auth_register',
      body: z.strictObject({ username: usernameSchema, email: emailSchema, password: newPasswordSchema }),
      errors: ['CONFLICT'],
      response: { status: 201, description: 'Registered; the token pair of the new session.', data: deliveredPairSchema },
      handler: async ({ req, res, body }) => deliverPair(req, res, await sessions.register(body), cookie),
    });

    api.add({
      method: 'post',
      path: '/auth/login',
      summary: 'Log in with username (or email) and password',
      description: COOKIE_NOTE.trim(),
      tags: ['auth'],
      access: 'public',
      rateLimit: 'auth_login',
      body: z.strictObject({ username: z.string().min(1).max(320).describe('Username or email.'), password: presentedPassword }),
      errors: ['UNAUTHORIZED'],
      response: { status: 200, description: 'The token pair of a new session.', data: deliveredPairSchema },
      handler: async ({ req, res, body }) => deliverPair(req, res, await sessions.login(body.username, body.password), cookie),
    });

    api.add({
      method: 'post',
      path: '/auth/refresh',
      summary: 'Exchange a refresh token for a new pair (single use)',
      description:
        'Presenting a refresh token that was already exchanged revokes every token of that session. ' +
        'The token comes in the body, or — for a browser that keeps it as the refresh cookie — from that cookie (body `{}`).' +
        COOKIE_NOTE,
      tags: ['auth'],
      access: 'public',
      rateLimit: 'auth_refresh',
      body: z.strictObject({ refresh_token: refreshTokenSchema.optional().describe('Required unless the refresh cookie is sent.') }),
      errors: ['UNAUTHORIZED'],
      response: { status: 200, description: 'A new token pair; the old refresh token is spent.', data: deliveredPairSchema },
      handler: async ({ req, res, body }) => {
        const token = body.refresh_token ?? cookieRefreshToken(req);
        if (!token) throw AppError.validation({ refresh_token: [{ code: 'invalid_type', message: 'Required (in the body, or as the refresh cookie).' }] });
        try {
          return deliverPair(req, res, await sessions.refresh(token), cookie);
        } catch (error) {
          // A spent or revoked cookie is dropped, so the browser stops presenting it.
          if (body.refresh_token === undefined) clearRefreshCookie(req, res, cookie);
          throw error;
        }
      },
    });

    api.add({
      method: 'delete',
      path: '/auth/refresh',
      summary: 'Sign a browser out: end the session of its refresh cookie and clear the cookie',
      description: 'The cookie twin of `POST /auth/logout`. Idempotent: without a cookie, or with a spent one, also 204.',
      tags: ['auth'],
      access: 'public',
      response: { status: 204, description: 'The session is ended and the cookie cleared.' },
      handler: async ({ req, res }) => {
        const token = cookieRefreshToken(req);
        if (token) await sessions.logout(token);
        clearRefreshCookie(req, res, cookie);
      },
    });

    api.add({
      method: 'post',
      path: '/auth/logout',
      summary: 'End the session a refresh token belongs to',
      description: 'Idempotent: an unknown or already revoked token also answers 204.',
      tags: ['auth'],
      access: 'public',
      body: z.strictObject({ refresh_token: refreshTokenSchema }),
      response: { status: 204, description: 'The session is ended.' },
      handler: async ({ body }) => void (await sessions.logout(body.refresh_token)),
    });

    api.add({
      method: 'post',
      path: '/auth/logout-all',
      summary: 'End every session of the caller',
      description: 'Revokes every refresh token and refuses every access token issued until now.',
      tags: ['auth'],
      access: 'user',
      response: { status: 204, description: 'Every session is ended.' },
      handler: async ({ principal }) => void (await sessions.logoutAll(principal.userId)),
    });

    api.add({
      method: 'get',
      path: '/auth/me',
      summary: 'The caller',
      tags: ['auth'],
      access: 'user',
      response: { status: 200, description: 'The authenticated user.', data: userViewSchema },
      handler: async ({ principal }) => {
        const user = await users.findById(principal.userId);
        if (!user) throw new AppError('UNAUTHORIZED', 'Authentication is required: the credential is missing or not valid.');
        return toUserView(user);
      },
    });

    api.add({
      method: 'post',
      path: '/auth/change-password',
      summary: 'Change the password; ends every other session',
      description: 'Revokes every refresh token and earlier access token, and returns a new pair for this client.',
      tags: ['auth'],
      access: 'user',
      body: z.strictObject({ current_password: presentedPassword, new_password: newPasswordSchema }),
      response: { status: 200, description: 'Changed; a fresh token pair.', data: deliveredPairSchema },
      handler: async ({ req, res, principal, body }) =>
        deliverPair(req, res, await sessions.changePassword(principal.userId, body.current_password, body.new_password), cookie),
    });
  };
}
