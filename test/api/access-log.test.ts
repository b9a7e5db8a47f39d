import http, { type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import express from 'express';
import { accessLog } from '../../src/api/middleware/access-log';
import { createLogger } from '../../src/logs/logger';

/** The access log's one line per request, for answered requests and for clients that went away (issue 34 moved it onto one 'close' listener). */
describe('access log', () => {
  let server: Server;
  let lines: Record<string, unknown>[];

  async function start(level: 'info' | 'silent'): Promise<string> {
    lines = [];
    const destination = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
        done();
      },
    });
    const logger = createLogger({ level, format: 'json', name: 'test', destination });
    const app = express();
    app.use(accessLog(logger, { quietPrefixes: [] }));
    app.get('/ok', (_req, res) => void res.status(201).json({ ok: true }));
    app.get('/hang', () => undefined); // never answers: the client gives up
    server = app.listen(0);
    await new Promise((resolve) => server.once('listening', resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  afterEach(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  async function until(check: () => boolean): Promise<void> {
    for (let attempt = 0; attempt < 200 && !check(); attempt += 1) await new Promise((resolve) => setTimeout(resolve, 10));
  }

  it('writes one line with the status for an answered request', async () => {
    const base = await start('info');
    expect((await fetch(`${base}/ok`)).status).toBe(201);
    await until(() => lines.length > 0);
    await new Promise((resolve) => setTimeout(resolve, 50)); // a second line would have come by now
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ res: { status: 201 }, req: { method: 'GET', url: '/ok' } });
    expect(lines[0]!.aborted).toBeUndefined();
  });

  it('writes an aborted line when the client goes away before the answer', async () => {
    const base = await start('info');
    const request = http.get(`${base}/hang`);
    request.on('error', () => undefined);
    await new Promise((resolve) => setTimeout(resolve, 50));
    request.destroy();
    await until(() => lines.length > 0);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ aborted: true, req: { url: '/hang' } });
    expect(String(lines[0]!.msg)).toContain('aborted');
  });

  it('writes nothing on a silent hub', async () => {
    const base = await start('silent');
    expect((await fetch(`${base}/ok`)).status).toBe(201);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(lines).toHaveLength(0);
  });
});
