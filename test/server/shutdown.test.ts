import { z } from 'zod';
import type { ApiModule } from '../../src/api/app';
import { startService } from '../../src/main';
import { testEnv } from '../helpers/env';
import { request, startTestApp } from '../helpers/http';
import { LogCapture } from '../helpers/log-capture';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir';

afterAll(removeTempDirs);

/** An endpoint that holds its response until the test releases it: an in-flight request. */
function slowModule(): { module: ApiModule; started: Promise<void>; release: () => void } {
  let release!: () => void;
  let markStarted!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const started = new Promise<void>((resolve) => (markStarted = resolve));
  const module: ApiModule = (api) => {
    api.add({
      method: 'get',
      path: '/test/slow',
      summary: 'slow',
      tags: ['test'],
      access: 'public',
      response: { status: 200, description: 'done', data: z.object({ finished: z.boolean() }) },
      handler: async () => {
        markStarted();
        await gate;
        return { finished: true };
      },
    });
  };
  return { module, started, release };
}

describe('graceful shutdown', () => {
  it('lets the in-flight request finish while refusing new connections, then stops', async () => {
    const slow = slowModule();
    const app = await startTestApp({ modules: [slow.module] });
    const inFlight = request(`${app.url}/api/v1/test/slow`);
    await slow.started;
    const stopped = app.close();
    await expect(fetch(`${app.url}/api/v1/health`)).rejects.toThrow();
    slow.release();
    const finished = await inFlight;
    expect(finished.status).toBe(200);
    expect(finished.body.data).toEqual({ finished: true });
    await stopped;
  });

  it('answers 503 SERVICE_UNAVAILABLE with Connection: close to requests that arrive while draining', async () => {
    const app = await startTestApp();
    // Something registered after the HTTP server stops first and takes its time (like a worker
    // finishing its turns); requests that still arrive meanwhile are refused, not served.
    let release!: () => void;
    app.lifecycle.onStop({ name: 'worker', stop: () => new Promise<void>((resolve) => (release = resolve)) });
    const stopped = app.close();
    const response = await request(`${app.url}/api/v1/health`);
    expect(response.status).toBe(503);
    expect(response.body.error.code).toBe('SERVICE_UNAVAILABLE');
    expect(response.headers.get('retry-after')).toBe('5');
    expect(response.headers.get('connection')).toBe('close');
    release();
    await stopped;
    await expect(fetch(`${app.url}/api/v1/health`)).rejects.toThrow();
  });

  it('stops the whole service: database closed, port released', async () => {
    const logs = new LogCapture();
    const service = await startService({ env: testEnv(makeTempDir()), cwd: makeTempDir(), logDestination: logs });
    expect((await fetch(`${service.url.replace('localhost', '127.0.0.1')}/api/v1/health`)).status).toBe(200);
    await service.stop();
    await expect(fetch(`http://127.0.0.1:${service.port}/api/v1/health`)).rejects.toThrow();
    expect(logs.text).not.toContain('error while stopping');
  });
});

describe('readiness', () => {
  it('is 503 with the failed check named when a dependency fails', async () => {
    const app = await startTestApp({
      readiness: [
        { name: 'database', check: async () => undefined },
        {
          name: 'redis',
          check: async () => {
            throw new Error('connect ECONNREFUSED 127.0.0.1:1');
          },
        },
      ],
    });
    try {
      const response = await request(`${app.url}/api/v1/health/ready`);
      expect(response.status).toBe(503);
      expect(response.headers.get('retry-after')).toBe('5');
      expect(response.body.error.details.checks).toEqual({
        database: { status: 'ok', latency_ms: expect.any(Number) },
        redis: { status: 'failed', latency_ms: expect.any(Number), error: 'connect ECONNREFUSED 127.0.0.1:1' },
      });
      // Liveness does not depend on the dependencies.
      expect((await request(`${app.url}/api/v1/health`)).status).toBe(200);
    } finally {
      await app.close();
    }
  });

  it('checks Redis when SERVICE_REDIS_URL is set', async () => {
    const logs = new LogCapture();
    const service = await startService({
      env: testEnv(makeTempDir(), { SERVICE_REDIS_URL: 'redis://127.0.0.1:6379' }),
      cwd: makeTempDir(),
      logDestination: logs,
    });
    try {
      const response = await request(`http://127.0.0.1:${service.port}/api/v1/health/ready`);
      expect(response.status).toBe(200);
      expect(Object.keys(response.body.data.checks).sort()).toEqual(['database', 'redis', 'workers']);
      expect(logs.text).toContain('BullMQ on Redis redis://127.0.0.1:6379');
    } finally {
      await service.stop();
    }
  });
});
