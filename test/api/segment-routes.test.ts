import { z } from 'zod';
import type { ApiModule } from '../../src/api/app';
import { request, startTestApp, type TestApp } from '../helpers/http';
import { removeTempDirs } from '../helpers/temp-dir';

/**
 * The API router groups routes by first segment and length (src/api/segment-routes.ts); a request
 * must still find exactly the route express's own matching would: any case, one trailing slash,
 * parameters of one segment, the 405 of its own path, and the docs mounted beside the API.
 */
const paths = ['/things', '/things/{id}', '/things/{id}/parts', '/things/{id}/tags', '/things/{id}/parts/{part}', '/other/{id}/parts'];
const routesModule: ApiModule = (api) => {
  for (const path of paths) {
    api.add({
      method: 'get',
      path,
      summary: path,
      tags: ['test'],
      access: 'public',
      params: z.object(Object.fromEntries([...path.matchAll(/\{(\w+)\}/g)].map(([, name]) => [name!, z.string()]))),
      response: { status: 200, description: 'which route answered' },
      handler: ({ params }) => ({ route: path, params }),
    });
  }
  api.add({
    method: 'post',
    path: '/things/{id}/parts',
    summary: 'post a part',
    params: z.object({ id: z.string() }),
    tags: ['test'],
    access: 'public',
    response: { status: 201, description: 'posted' },
    handler: () => ({ route: 'POST /things/{id}/parts' }),
  });
};

describe('API routes grouped by first segment and length', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ modules: [routesModule] });
  });
  afterAll(async () => {
    await app.close();
    removeTempDirs();
  });

  const get = (path: string) => request(`${app.url}/api/v1${path}`);

  it.each([
    ['/things', '/things', {}],
    ['/things/', '/things', {}],
    ['/THINGS/a', '/things/{id}', { id: 'a' }],
    ['/things/a/', '/things/{id}', { id: 'a' }],
    ['/things/a/parts', '/things/{id}/parts', { id: 'a' }],
    ['/Things/a/Tags/', '/things/{id}/tags', { id: 'a' }],
    ['/things/a%2Fb/parts', '/things/{id}/parts', { id: 'a/b' }],
    ['/things/a/parts/7', '/things/{id}/parts/{part}', { id: 'a', part: '7' }],
    ['/other/x/parts', '/other/{id}/parts', { id: 'x' }],
  ])('GET %s answers from %s', async (path, route, params) => {
    const response = await get(path);
    expect(response.status).toBe(200);
    expect(response.body.data).toEqual({ route, params });
  });

  it.each(['/things//parts', '/things/a/parts//', '/things/a/parts/7/8', '/other/x', '/things/a/nothing', '/nothing/a/parts'])(
    'GET %s is 404 NOT_FOUND',
    async (path) => {
      const response = await get(path);
      expect(response.status).toBe(404);
      expect(response.body.error.code).toBe('NOT_FOUND');
    },
  );

  it('a known path answers another method with its own Allow', async () => {
    const put = await request(`${app.url}/api/v1/things/a/parts/`, { method: 'PUT' });
    expect(put.status).toBe(405);
    expect(put.headers.get('allow')).toBe('GET, POST, HEAD, OPTIONS');
    const post = await request(`${app.url}/api/v1/things/a/parts`, { method: 'POST' });
    expect(post.status).toBe(201);
    expect(post.body.data).toEqual({ route: 'POST /things/{id}/parts' });
    const other = await request(`${app.url}/api/v1/things/a`, { method: 'DELETE' });
    expect(other.headers.get('allow')).toBe('GET, HEAD, OPTIONS');
  });

  it('the OpenAPI document and the docs page are still served under the API prefix', async () => {
    const openapi = await get('/openapi.json');
    expect(openapi.status).toBe(200);
    expect(Object.keys(openapi.body.paths)).toEqual(expect.arrayContaining(['/api/v1/things/{id}/parts']));
    const docs = await fetch(`${app.url}/api/v1/docs/`);
    expect(docs.status).toBe(200);
    expect(docs.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
  });
});
