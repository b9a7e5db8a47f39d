import express, { type RequestHandler } from 'express';
import { z } from 'zod';
import { SAML_ACS_BODY_LIMIT_BYTES } from '../../auth/saml/limits';
import type { SamlService } from '../../auth/saml/service';
import { tokenPairSchema } from '../../auth/sessions';
import { AppError } from '../../core/errors';
import { API_PREFIX, type ApiModule } from '../app';
import { sendData } from '../envelope';

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

export function samlRoutes(service: SamlService | null): ApiModule {
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
      path: '/auth/saml/acs',
      summary: 'SAML assertion consumer: log in with a signed SAMLResponse',
      description:
        'Checks signature, audience, recipient, validity window, InResponseTo and that the assertion was never used before; ' +
        `the body is limited to ${SAML_ACS_BODY_LIMIT_BYTES / 1024} KiB (413 above). ` +
        'finds or provisions the user by email. Answers the token pair as JSON when the request accepts `application/json`, ' +
        'otherwise redirects (302) to the web UI with the pair in the URL fragment.',
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
        const pair = await saml.consume(body.SAMLResponse);
        if (req.accepts(['html', 'json']) === 'json') {
          sendData(res, 200, pair);
          return;
        }
        const fragment = new URLSearchParams({
          access_token: pair.access_token,
          refresh_token: pair.refresh_token,
          token_type: pair.token_type,
          expires_in: String(pair.expires_in),
        });
        res.setHeader('Cache-Control', 'no-store');
        res.redirect(302, `${saml.webUiUrl}#${fragment.toString()}`);
      },
    });
  };
}
