import express, { type RequestHandler } from 'express';
import { z } from 'zod';
import { SAML_ACS_BODY_LIMIT_BYTES } from '../../auth/saml/limits';
import type { SamlService } from '../../auth/saml/service';
import { tokenPairSchema } from '../../auth/sessions';
import { AppError } from '../../core/errors';
import { API_PREFIX, type ApiModule } from '../app';
import { sendData } from '../envelope';
import { DEFAULT_REFRESH_COOKIE, deliverPair, type RefreshCookieOptions } from '../refresh-cookie';
import { deliveredPairSchema } from './auth';

export const SAML_PATH = `${API_PREFIX}/auth/saml`;
const RELAY_STATE_MAX = 1024;

function notConfigured(): AppError {
  return new AppError('SAML_NOT_CONFIGURED', 'SAML single sign-on is not configured on this server.');
}

/**
 * Mounted before the JSON parser (AppOptions.rawRoutes) under /api/v1/auth/saml: answers 503 while
 * SAML is off, and parses the ACS form body (the only form-encoded endpoint).
 */
export function samlPreamble(service: SamlService | null): RequestHandler {
  // Capped at what real IdPs send (limits.ts): a larger body is refused (413) before it is read.
  const form = express.urlencoded({ extended: false, limit: SAML_ACS_BODY_LIMIT_BYTES, type: 'application/x-www-form-urlencoded' });
  return (req, res, next) => {
    if (!service) return next(notConfigured());
    if (req.method === 'POST' && req.path === '/acs') return form(req, res, next);
    return next();
  };
}

export function samlRoutes(service: SamlService | null, cookie: RefreshCookieOptions = DEFAULT_REFRESH_COOKIE): ApiModule {
  const require = (): SamlService => {
    if (!service) throw notConfigured();
    return service;
  };
  return (api) => {
    api.add({
      method: 'get',
      path: '/auth/saml/metadata',
      summary: 'SAML service-provider metadata (XML)',
      tags: ['auth'],
      access: 'public',
      raw: true,
      errors: ['SAML_NOT_CONFIGURED'],
      response: { status: 200, description: 'SP metadata, `application/samlmetadata+xml`.' },
      handler: ({ res }) => {
        res.status(200).type('application/samlmetadata+xml').send(require().metadata());
      },
    });

    api.add({
      method: 'get',
      path: '/auth/saml/login',
      summary: 'Start a SAML login: redirect to the identity provider',
      tags: ['auth'],
      access: 'public',
      raw: true,
      query: z.object({ relay_state: z.string().max(RELAY_STATE_MAX).optional().describe('Returned unchanged as RelayState.') }),
      errors: ['SAML_NOT_CONFIGURED'],
      response: { status: 302, description: 'Redirect to the IdP with a SAMLRequest.' },
      handler: async ({ res, query }) => {
        res.redirect(302, await require().loginUrl(query.relay_state ?? ''));
      },
    });

    api.add({
      method: 'post',
      path: '/auth/saml/exchange',
      summary: 'Exchange the one-time code of a browser SAML login for a token pair',
      description:
        'The Web UI calls this with the `saml_code` and `state` of the fragment it was redirected to, after checking that `state` is the ' +
        'nonce it sent as `relay_state` when it started the login. A code works once, for a few minutes, and only with its state.',
      tags: ['auth'],
      access: 'public',
      rateLimit: 'auth_login',
      body: z.strictObject({ code: z.string().min(1).max(128), state: z.string().max(RELAY_STATE_MAX) }),
      errors: ['UNAUTHORIZED', 'SAML_NOT_CONFIGURED'],
      response: { status: 200, description: 'The token pair (the refresh token as a cookie when asked for).', data: deliveredPairSchema },
      handler: async ({ req, res, body }) => deliverPair(req, res, await require().exchange(body.code, body.state), cookie),
    });

    api.add({
      method: 'post',
      path: '/auth/saml/acs',
      summary: 'SAML assertion consumer: log in with a signed SAMLResponse',
      description:
        'Checks signature, audience, recipient, validity window, InResponseTo and that the assertion was never used before; ' +
        `the body is limited to ${SAML_ACS_BODY_LIMIT_BYTES / 1024} KiB (413 above). ` +
        'finds or provisions the user by email. Answers the token pair as JSON when the request accepts `application/json`, ' +
        'otherwise redirects (302) to the web UI with a one-time code and the RelayState in the URL fragment ' +
        '(`#saml_code=…&state=…`), which the UI exchanges at `POST /auth/saml/exchange`: no tokens in URLs.',
      tags: ['auth'],
      access: 'public',
      rateLimit: 'saml_acs',
      raw: true,
      bodyMediaType: 'application/x-www-form-urlencoded',
      body: z.object({
        SAMLResponse: z.string().min(1).max(SAML_ACS_BODY_LIMIT_BYTES),
        RelayState: z.string().max(RELAY_STATE_MAX).optional(),
      }),
      errors: ['UNAUTHORIZED', 'SAML_NOT_CONFIGURED', 'UNSUPPORTED_MEDIA_TYPE', 'PAYLOAD_TOO_LARGE', 'SERVICE_UNAVAILABLE'],
      // Raw handler (it may redirect instead): the schema only describes the JSON answer.
      response: { status: 200, description: 'The token pair (JSON clients); browsers get a 302 instead.', data: tokenPairSchema as z.ZodType },
      handler: async ({ req, res, body }) => {
        const saml = require();
        if (req.accepts(['html', 'json']) === 'json') {
          sendData(res, 200, await saml.consume(body.SAMLResponse));
          return;
        }
        // A browser: a one-time code bound to the RelayState (the UI's nonce), never the tokens (login CSRF).
        const state = body.RelayState ?? '';
        const code = await saml.consumeForBrowser(body.SAMLResponse, state);
        const fragment = new URLSearchParams({ saml_code: code, state });
        res.setHeader('Cache-Control', 'no-store');
        res.redirect(302, `${saml.webUiUrl}#${fragment.toString()}`);
      },
    });
  };
}
