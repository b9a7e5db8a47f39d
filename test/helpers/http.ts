import { Readable } from 'node:stream';
import { createApp, type AppOptions } from '../../src/api/app';
import { loadConfig } from '../../src/config';
import { createLogger } from '../../src/logs/logger';
import { listen, type HttpServer } from '../../src/server/http-server';
import { Lifecycle } from '../../src/server/lifecycle';
import { testEnv } from './env';
import { LogCapture } from './log-capture';
import { makeTempDir } from './temp-dir';

export interface TestApp {
  url: string;
  http: HttpServer;
  lifecycle: Lifecycle;
  logs: LogCapture;
  close(): Promise<void>;
}

/** The real express app on a real loopback port, with extra modules and captured logs. */
export async function startTestApp(overrides: Partial<AppOptions> = {}, env: Record<string, string> = {}): Promise<TestApp> {
  const { config } = loadConfig({ env: testEnv(makeTempDir(), env), cwd: makeTempDir() });
  const logs = new LogCapture();
  const logger = createLogger({ level: 'debug', format: 'json', name: 'api', destination: logs });
  const lifecycle = new Lifecycle();
  const app = createApp({ config, logger, lifecycle, readiness: [], ...overrides });
  const http = await listen(app.express, '127.0.0.1', 0);
  lifecycle.onStop({ name: 'http', stop: () => http.close(5_000) });
  return {
    url: `http://127.0.0.1:${http.port}`,
    http,
    lifecycle,
    logs,
    close: () => lifecycle.shutdown(() => undefined),
  };
}

export interface JsonResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

/** fetch + JSON parse; the body is `null` when the response has none. */
export async function request<T = any>(url: string, init: RequestInit = {}): Promise<JsonResponse<T>> {
  const response = await fetch(url, init);
  const text = await response.text();
  let body: any = null;
  if (text !== '') {
    try {
      body = JSON.parse(text);
    } catch {
      body = text;
    }
  }
  return { status: response.status, headers: response.headers, body };
}

export function jsonBody(value: unknown, extra: Record<string, string> = {}): RequestInit {
  return { method: 'POST', headers: { 'content-type': 'application/json', ...extra }, body: JSON.stringify(value) };
}

/** A body sent chunked (no Content-Length), as streaming clients do. */
export function streamedBody(text: string): RequestInit & { duplex: 'half' } {
  return {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: Readable.toWeb(Readable.from([Buffer.from(text)])) as unknown as RequestInit['body'],
    duplex: 'half',
  };
}
