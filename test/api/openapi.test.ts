import { Validator } from '@seriousme/openapi-schema-validator';
import { request, startTestApp, type TestApp } from '../helpers/http';
import { removeTempDirs } from '../helpers/temp-dir';

let app: TestApp;

beforeAll(async () => {
  app = await startTestApp();
});

afterAll(async () => {
  await app.close();
  removeTempDirs();
});

describe('OpenAPI document and interactive docs', () => {
  it('serves a valid OpenAPI 3.1 document describing the endpoints', async () => {
    const response = await request(`${app.url}/api/v1/openapi.json`);
    expect(response.status).toBe(200);
    const document = response.body;
    expect(document.openapi).toBe('3.1.0');
    const validator = new Validator();
    const result = await validator.validate(document);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(Object.keys(document.paths)).toEqual(expect.arrayContaining(['/api/v1/health', '/api/v1/health/ready']));
    expect(document.paths['/api/v1/health/ready'].get.responses['503']).toBeDefined();
    expect(document.components.schemas.ErrorEnvelope).toBeDefined();
  });

  it('serves swagger-ui as HTML with its assets from this server, pointing at the document', async () => {
    const page = await fetch(`${app.url}/api/v1/docs/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
    const html = await page.text();
    expect(html).toContain('swagger-ui');
    expect(html).not.toMatch(/https?:\/\/(?!localhost)[^"']+\.(js|css)/); // no CDN
    const init = await fetch(`${app.url}/api/v1/docs/swagger-ui-init.js`);
    expect(await init.text()).toContain('/api/v1/openapi.json');
    for (const asset of ['swagger-ui.css', 'swagger-ui-bundle.js', 'swagger-ui-standalone-preset.js']) {
      const response = await fetch(`${app.url}/api/v1/docs/${asset}`);
      expect({ asset, status: response.status }).toEqual({ asset, status: 200 });
    }
  });

  it('redirects /api/v1/docs to the page', async () => {
    const response = await fetch(`${app.url}/api/v1/docs`, { redirect: 'manual' });
    expect([200, 301, 302, 308]).toContain(response.status);
    const followed = await fetch(`${app.url}/api/v1/docs`);
    expect(followed.headers.get('content-type')).toMatch(/text\/html/);
  });
});
