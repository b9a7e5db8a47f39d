import { createServer, type AddressInfo } from 'node:net';
import { Client } from 'pg';
import { z } from 'zod';
import { JSON_BODY_LIMIT_BYTES, type ApiModule } from '../../src/api/app';
import { AppError } from '../../src/core/errors';
import { jsonBody, request, startTestApp, streamedBody, type TestApp } from '../helpers/http';
import { removeTempDirs } from '../helpers/temp-dir';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const ISO_MS_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** Endpoints that exercise the conventions; the framework under test is the real one. */
const conventionsModule: ApiModule = (api) => {
  api.add({
    method: 'post',
    path: '/test/echo',
    summary: 'echo',
    tags: ['test'],
    access: 'public',
    body: z.strictObject({ name: z.string().min(3), text: z.string().max(65_536).optional(), count: z.number().int().optional() }),
    query: z.object({ verbose: z.enum(['yes', 'no']).optional() }),
    response: { status: 201, description: 'echoed' },
    handler: ({ body, query }) => ({ ...body, verbose: query.verbose ?? null, length: body.text?.length ?? 0 }),
  });
  api.add({
    method: 'get',
    path: '/test/items/{id}',
    summary: 'item',
    tags: ['test'],
    access: 'public',
    params: z.object({ id: z.uuid() }),
    response: { status: 200, description: 'item' },
    handler: ({ params }) => {
      throw new AppError('NOT_FOUND', `No item ${params.id}.`);
    },
  });
  api.add({
    method: 'get',
    path: '/test/database-down',
    summary: 'reads a PostgreSQL that is not there',
    tags: ['test'],
    access: 'public',
    response: { status: 200, description: 'never' },
    handler: async () => {
      const client = new Client({ host: '127.0.0.1', port: await closedPort(), user: 'admin', password: 'hunter2', connectionTimeoutMillis: 5_000 });
      await client.connect();
      return {};
    },
  });
  api.add({
    method: 'get',
    path: '/test/boom',
    summary: 'fails unexpectedly',
    tags: ['test'],
    access: 'public',
    response: { status: 200, description: 'never' },
    handler: () => {
      throw new Error('connect failed for postgres://admin:hunter2@db/prod');
    },
  });
};

let app: TestApp;

beforeAll(async () => {
  app = await startTestApp({ modules: [conventionsModule] }, { SERVICE_ALLOWED_ORIGINS: 'https://chat.example.com' });
});

afterAll(async () => {
  await app.close();
  removeTempDirs();
});

function expectErrorEnvelope(body: any, code: string): void {
  expect(body).toEqual({
    data: null,
    error: { code, message: expect.any(String), details: expect.any(Object) },
    meta: { request_id: expect.stringMatching(UUID), timestamp: expect.stringMatching(ISO_MS_UTC) },
  });
  expect(JSON.stringify(body)).not.toMatch(/\bat .+\.(ts|js):\d+/); // never a stack trace
}

describe('the success envelope', () => {
  it('wraps data with error null and meta, and X-Request-ID equals meta.request_id', async () => {
    const response = await request(`${app.url}/api/v1/health`);
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      data: { status: 'ok', version: expect.any(String), uptime_s: expect.any(Number) },
      error: null,
      meta: { request_id: expect.stringMatching(UUID), timestamp: expect.stringMatching(ISO_MS_UTC) },
    });
    expect(response.headers.get('x-request-id')).toBe(response.body.meta.request_id);
  });

  it("keeps a caller's UUID request id and replaces anything else", async () => {
    const mine = '2b1e0a56-3d5f-4b6e-9a1c-7f00e3c2d111';
    const kept = await request(`${app.url}/api/v1/health`, { headers: { 'x-request-id': mine } });
    expect(kept.headers.get('x-request-id')).toBe(mine);
    expect(kept.body.meta.request_id).toBe(mine);
    const replaced = await request(`${app.url}/api/v1/health`, { headers: { 'x-request-id': '<script>' } });
    expect(replaced.headers.get('x-request-id')).toMatch(UUID);
  });

  it('uses the endpoint status and validated, typed input', async () => {
    const response = await request(`${app.url}/api/v1/test/echo?verbose=yes`, jsonBody({ name: 'alice', count: 2 }));
    expect(response.status).toBe(201);
    expect(response.body.data).toEqual({ name: 'alice', count: 2, verbose: 'yes', length: 0 });
  });

  it('accepts a 65,536-character message even in the worst JSON encoding', async () => {
    const controlCharacters = '\u0001'.repeat(65_536); // 6 bytes each once JSON-escaped
    const emoji = '\u{1F600}'.repeat(32_768); // 65,536 UTF-16 units, 4 bytes each in UTF-8
    for (const text of [controlCharacters, emoji]) {
      const response = await request(`${app.url}/api/v1/test/echo`, jsonBody({ name: 'big', text }));
      expect(response.status).toBe(201);
      expect(response.body.data.length).toBe(65_536);
    }
  });
});

describe('errors in the envelope', () => {
  it('404 NOT_FOUND for an unknown path, inside and outside /api/v1', async () => {
    for (const path of ['/api/v1/nope', '/favicon.ico', '/']) {
      const response = await request(`${app.url}${path}`);
      expect(response.status).toBe(404);
      expectErrorEnvelope(response.body, 'NOT_FOUND');
      expect(response.headers.get('x-request-id')).toBe(response.body.meta.request_id);
    }
  });

  it('404 from a handler keeps its own message', async () => {
    const response = await request(`${app.url}/api/v1/test/items/6a0f3c1e-2b4d-4e5f-8a9b-0c1d2e3f4a5b`);
    expect(response.status).toBe(404);
    expect(response.body.error.message).toBe('No item 6a0f3c1e-2b4d-4e5f-8a9b-0c1d2e3f4a5b.');
  });

  it('405 METHOD_NOT_ALLOWED with an Allow header when the path exists', async () => {
    const response = await request(`${app.url}/api/v1/health`, { method: 'DELETE' });
    expect(response.status).toBe(405);
    expectErrorEnvelope(response.body, 'METHOD_NOT_ALLOWED');
    expect(response.headers.get('allow')).toBe('GET, HEAD, OPTIONS');
    expect(response.body.error.details.allowed).toEqual(['GET', 'HEAD', 'OPTIONS']);
    const put = await request(`${app.url}/api/v1/test/echo`, { method: 'PUT' });
    expect(put.status).toBe(405);
    expect(put.headers.get('allow')).toBe('POST, OPTIONS');
  });

  it('OPTIONS without CORS answers 204 with Allow', async () => {
    const response = await fetch(`${app.url}/api/v1/test/echo`, { method: 'OPTIONS' });
    expect(response.status).toBe(204);
    expect(response.headers.get('allow')).toBe('POST, OPTIONS');
  });

  it('400 BAD_REQUEST for malformed JSON', async () => {
    const response = await request(`${app.url}/api/v1/test/echo`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"name": "alice",',
    });
    expect(response.status).toBe(400);
    expectErrorEnvelope(response.body, 'BAD_REQUEST');
  });

  it('413 PAYLOAD_TOO_LARGE above the body limit, with or without Content-Length', async () => {
    const huge = JSON.stringify({ name: 'x'.repeat(JSON_BODY_LIMIT_BYTES + 1) });
    const declared = await request(`${app.url}/api/v1/test/echo`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: huge,
    });
    expect(declared.status).toBe(413);
    expectErrorEnvelope(declared.body, 'PAYLOAD_TOO_LARGE');
    expect(declared.body.error.details.limit_bytes).toBe(JSON_BODY_LIMIT_BYTES);
    const chunked = await request(`${app.url}/api/v1/test/echo`, streamedBody(huge));
    expect(chunked.status).toBe(413);
  });

  it('415 UNSUPPORTED_MEDIA_TYPE for a body that is not JSON', async () => {
    const response = await request(`${app.url}/api/v1/test/echo`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: 'name=alice',
    });
    expect(response.status).toBe(415);
    expectErrorEnvelope(response.body, 'UNSUPPORTED_MEDIA_TYPE');
    expect(response.body.error.details).toEqual({ expected: 'application/json', received: 'text/plain' });
  });

  it('422 VALIDATION_ERROR with details.fields for body, query and path', async () => {
    const body = await request(`${app.url}/api/v1/test/echo?verbose=maybe`, jsonBody({ name: 'al', count: 1.5, extra: true }));
    expect(body.status).toBe(422);
    expectErrorEnvelope(body.body, 'VALIDATION_ERROR');
    const fields = body.body.error.details.fields;
    expect(Object.keys(fields).sort()).toEqual(['body', 'count', 'name', 'query.verbose']);
    expect(fields.name).toEqual([{ code: 'too_small', message: expect.any(String) }]);
    expect(fields.body[0].code).toBe('unrecognized_keys');

    const path = await request(`${app.url}/api/v1/test/items/not-a-uuid`);
    expect(path.status).toBe(422);
    expect(Object.keys(path.body.error.details.fields)).toEqual(['path.id']);
  });

  it('422 names the body itself when it is missing', async () => {
    const response = await request(`${app.url}/api/v1/test/echo`, { method: 'POST' });
    expect(response.status).toBe(422);
    expect(Object.keys(response.body.error.details.fields)).toEqual(['body']);
  });

  it('500 INTERNAL_ERROR hides the cause from the client and logs it with the request id', async () => {
    const response = await request(`${app.url}/api/v1/test/boom`);
    expect(response.status).toBe(500);
    expectErrorEnvelope(response.body, 'INTERNAL_ERROR');
    expect(response.body.error.message).toBe('An internal error occurred.');
    expect(JSON.stringify(response.body)).not.toContain('hunter2');
    const logged = app.logs.entries().find((entry) => entry.request_id === response.body.meta.request_id);
    expect(logged).toMatchObject({ level: 'error', path: '/api/v1/test/boom' });
  });
});

/** A loopback port nothing listens on (taken, then let go). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('a database that cannot be reached', () => {
  it('is a 503 SERVICE_UNAVAILABLE with Retry-After, not a 500: the request can be sent again', async () => {
    const response = await request(`${app.url}/api/v1/test/database-down`);
    expect(response.status).toBe(503);
    expectErrorEnvelope(response.body, 'SERVICE_UNAVAILABLE');
    expect(response.headers.get('retry-after')).toBe('2');
    expect(JSON.stringify(response.body)).not.toContain('hunter2');
  });
});

describe('CORS for the allowed origins', () => {
  it('answers a preflight from an allowed origin, allowing Authorization and X-API-Key', async () => {
    const response = await fetch(`${app.url}/api/v1/test/echo`, {
      method: 'OPTIONS',
      headers: {
        origin: 'https://chat.example.com',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization,content-type,x-api-key',
      },
    });
    expect(response.status).toBe(204);
    expect(response.headers.get('access-control-allow-origin')).toBe('https://chat.example.com');
    expect(response.headers.get('access-control-allow-headers')).toMatch(/Authorization.*Content-Type.*X-API-Key/);
  });

  it('exposes X-Request-ID to the web UI dev server and refuses unknown origins', async () => {
    const allowed = await fetch(`${app.url}/api/v1/health`, { headers: { origin: 'http://localhost:5173' } });
    expect(allowed.headers.get('access-control-allow-origin')).toBe('http://localhost:5173');
    expect(allowed.headers.get('access-control-expose-headers')).toContain('X-Request-ID');
    const refused = await fetch(`${app.url}/api/v1/health`, { headers: { origin: 'https://evil.example' } });
    expect(refused.headers.get('access-control-allow-origin')).toBeNull();
  });
});
