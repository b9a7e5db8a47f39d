import { Validator } from '@seriousme/openapi-schema-validator';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { startAuthService, type AuthService } from '../helpers/auth-service';
import { request } from '../helpers/http';
import { removeTempDirs } from '../helpers/temp-dir';

let hub: AuthService;

beforeAll(async () => {
  hub = await startAuthService();
});

afterAll(async () => {
  await hub.close();
  removeTempDirs();
});

/** Every auth endpoint of decisions.md §2, as `METHOD /path`. */
const AUTH_ENDPOINTS = [
  'POST /auth/register',
  'POST /auth/login',
  'POST /auth/refresh',
  'POST /auth/logout',
  'POST /auth/logout-all',
  'GET /auth/me',
  'POST /auth/change-password',
  'GET /auth/api-keys',
  'POST /auth/api-keys',
  'DELETE /auth/api-keys/{id}',
  'GET /users',
  'POST /users',
  'PATCH /users/{id}',
  'DELETE /users/{id}',
  'GET /auth/saml/metadata',
  'GET /auth/saml/login',
  'POST /auth/saml/acs',
];

describe('auth endpoints are documented', () => {
  it('in a valid OpenAPI document of the running service, with bearer/API-key security where needed', async () => {
    const document = (await request(`${hub.api}/openapi.json`)).body;
    const result = await new Validator().validate(document);
    expect(result.errors ?? []).toEqual([]);
    for (const endpoint of AUTH_ENDPOINTS) {
      const [method, route] = endpoint.split(' ') as [string, string];
      const operation = document.paths[`/api/v1${route}`]?.[method.toLowerCase()];
      expect({ endpoint, documented: operation !== undefined }).toEqual({ endpoint, documented: true });
    }
    expect(document.paths['/api/v1/auth/me'].get.security).toEqual([{ bearer: [] }, { apiKey: [] }]);
    expect(document.paths['/api/v1/auth/login'].post.security).toEqual([]);
    expect(document.paths['/api/v1/users'].get.responses['403']).toBeDefined();
    expect(Object.keys(document.paths['/api/v1/auth/saml/acs'].post.requestBody.content)).toEqual(['application/x-www-form-urlencoded']);
    expect(document.paths['/api/v1/auth/saml/acs'].post.responses['503'].description).toContain('SAML_NOT_CONFIGURED');
  });

  it("in the documentation site's REST reference (generated from the OpenAPI document)", () => {
    const reference = readFileSync(path.resolve(__dirname, '../../docs/reference/rest.md'), 'utf8');
    for (const endpoint of AUTH_ENDPOINTS) {
      const [method, route] = endpoint.split(' ') as [string, string];
      expect({ endpoint, inReference: reference.includes(`| ${method} | [\`/api/v1${route}\`]`) }).toEqual({ endpoint, inReference: true });
    }
  });
});
