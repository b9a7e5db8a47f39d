import { z } from 'zod';
import type { ApiModule } from '../app';

const signInMethodsSchema = z.object({
  password: z.boolean().describe('Username (or email) and password: always on.'),
  saml: z.boolean().describe('SAML single sign-on (`GET /auth/saml/login`) is configured.'),
});

/** `GET /auth/methods`: the ways to sign in, so the sign-in page offers SAML only when it is on. */
export function signInMethodRoutes(samlOn: boolean): ApiModule {
  return (api) =>
    api.add({
      method: 'get',
      path: '/auth/methods',
      summary: 'The ways to sign in on this hub (the sign-in page offers SAML only when it is on)',
      tags: ['auth'],
      access: 'public',
      response: { status: 200, description: 'Which sign-in methods are on.', data: signInMethodsSchema },
      handler: () => ({ password: true, saml: samlOn }),
    });
}
