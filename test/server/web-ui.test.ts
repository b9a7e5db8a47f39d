import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import express from 'express';
import request from 'supertest';
import { webUi } from '../../src/server/web-ui';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir';

afterAll(removeTempDirs);

/** The UI handler in front of a stand-in API that answers everything it is given with JSON. */
function appServing(dir: string) {
  const app = express();
  app.use('/', webUi(dir));
  app.use((req, res) => res.status(404).json({ data: null, error: { code: 'NOT_FOUND', message: `No such endpoint: ${req.method} ${req.path}` } }));
  return app;
}

function builtUi(): string {
  const dir = makeTempDir();
  mkdirSync(path.join(dir, 'assets'));
  writeFileSync(path.join(dir, 'index.html'), '<!doctype html><div id="root"></div>');
  writeFileSync(path.join(dir, 'assets', 'index-abc123.js'), 'console.log(1)');
  writeFileSync(path.join(dir, 'favicon.svg'), '<svg/>');
  return dir;
}

describe('the web UI route', () => {
  const app = appServing(builtUi());

  it('serves the app at / and at any page address (history fallback), with a CSP', async () => {
    for (const address of ['/', '/sessions', '/sessions/1f0c', '/admin/logs']) {
      const response = await request(app).get(address).set('accept', 'text/html');
      expect(response.status).toBe(200);
      expect(response.text).toContain('<div id="root">');
      expect(response.headers['cache-control']).toBe('no-cache');
      // This origin only (issue 26: `ws: wss:` let scripts open sockets to any host).
      expect(response.headers['content-security-policy']).toContain("connect-src 'self';");
      expect(response.headers['content-security-policy']).not.toMatch(/ws:|wss:/);
    }
  });

  it('serves files, hashed assets cached for a year', async () => {
    const asset = await request(app).get('/assets/index-abc123.js');
    expect(asset.status).toBe(200);
    expect(asset.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect((await request(app).get('/favicon.svg')).headers['cache-control']).toBe('no-cache');
  });

  it('never answers under /api or /ws, at /metrics, for other methods, for missing files or for non-HTML clients', async () => {
    for (const address of ['/api', '/api/v1/sessions', '/API/v1/x', '/ws/v1/logs', '/assets/missing.js', '/metrics']) {
      const response = await request(app).get(address).set('accept', 'text/html');
      expect(response.status).toBe(404);
      expect(response.body.error.code).toBe('NOT_FOUND');
    }
    expect((await request(app).post('/sessions').send({})).status).toBe(404);
    expect((await request(app).get('/sessions').set('accept', 'application/json')).status).toBe(404);
    // Prometheus asks for text but takes anything: with metrics off it must not get a page.
    expect(
      (await request(app).get('/metrics').set('accept', 'application/openmetrics-text;version=1.0.0;q=0.5,text/plain;version=0.0.4;q=0.3,*/*;q=0.2')).status,
    ).toBe(404);
  });

  it('says how to build the UI when it is not built', async () => {
    const response = await request(appServing(makeTempDir())).get('/').set('accept', 'text/html');
    expect(response.status).toBe(503);
    expect(response.text).toContain('npm run build:web');
  });
});
