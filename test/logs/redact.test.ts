import { createLogger } from '../../src/logs/logger';
import { pathRedactor } from '../../src/logs/path-redactor';
import { redactSecretQueryValues, redactUrlCredentials } from '../../src/logs/redact';
import { startTestApp } from '../helpers/http';
import { LogCapture } from '../helpers/log-capture';
import { removeTempDirs } from '../helpers/temp-dir';

afterAll(removeTempDirs);

describe('redaction helpers', () => {
  it('hides the password of a connection URL and keeps the rest', () => {
    expect(redactUrlCredentials('redis://:s3cret@cache:6379/0')).toBe('redis://:***@cache:6379/0');
    expect(redactUrlCredentials('postgres://app:s3cret@db:5432/hub')).toBe('postgres://app:***@db:5432/hub');
    expect(redactUrlCredentials('redis://cache:6379')).toBe('redis://cache:6379');
  });

  it('keeps query parameter names and hides their values', () => {
    expect(redactSecretQueryValues('/ws/v1/logs?token=eyJhbGciOi&level=DEBUG')).toBe('/ws/v1/logs?token=[redacted]&level=DEBUG');
    // Only secret names are hidden: paging and filters stay readable.
    expect(redactSecretQueryValues('/api/v1/sessions?limit=5&cursor=abc&api_key=svc_live_x&Token=t')).toBe(
      '/api/v1/sessions?limit=5&cursor=abc&api_key=[redacted]&Token=[redacted]',
    );
    expect(redactSecretQueryValues('/api/v1/health')).toBe('/api/v1/health');
  });

  it('hides every value whose name looks secret, not only known names (issue 26)', () => {
    const names = [
      'secret_token',
      'X-Telegram-Bot-Api-Secret-Token',
      'client_secret',
      'sessionKey',
      'apiKey',
      'password_hash',
      'passwd',
      'pwd',
      'hub.signature',
      'X-Hub-Signature-256',
      'AUTH',
      'authorization',
      'credentials',
      'SAMLart',
      'sig',
      'code',
      'state',
      'refresh_token',
      'id_token',
    ];
    for (const name of names) {
      expect(redactSecretQueryValues(`/x?${encodeURIComponent(name)}=canary&limit=5`)).toBe(`/x?${encodeURIComponent(name)}=[redacted]&limit=5`);
    }
    expect(redactSecretQueryValues('/x?limit=5&cursor=abc&include_archived=true&level=INFO')).toBe('/x?limit=5&cursor=abc&include_archived=true&level=INFO');
  });

  it('hides a Telegram bot token in the path', () => {
    expect(redactSecretQueryValues('/bot123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw/sendMessage?chat_id=1')).toBe('/bot[redacted]/sendMessage?chat_id=1');
    expect(redactSecretQueryValues('/api/v1/channels/telegram/webhook/123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw')).toBe(
      '/api/v1/channels/telegram/webhook/[redacted]',
    );
    expect(redactSecretQueryValues('/api/v1/sessions/123:abc')).toBe('/api/v1/sessions/123:abc');
  });
});

describe('the logger', () => {
  it('redacts secrets by field name, at the top level and one level down', () => {
    const capture = new LogCapture();
    const logger = createLogger({ level: 'info', format: 'json', name: 'test', destination: capture });
    logger.info({ password: 'canary-pw', user: { password: 'canary-nested', name: 'ann' }, api_key: 'svc_live_canary' }, 'hello');
    expect(capture.text).not.toMatch(/canary/);
    expect(capture.entries()[0]).toMatchObject({ password: '[redacted]', user: { password: '[redacted]', name: 'ann' }, name: 'test' });
  });

  it("redacts request headers by path (bracketed names, a channel's own secret headers), an error's secret fields and a child's bindings", () => {
    const capture = new LogCapture();
    const logger = createLogger({ level: 'info', format: 'json', name: 'test', destination: capture, redactPaths: ['req.headers["x-slack-signature"]'] });
    const headers = {
      authorization: 'Bearer canary-a',
      cookie: 'canary-c',
      'x-api-key': 'canary-k',
      'x-slack-signature': 'canary-s',
      accept: 'application/json',
    };
    logger.info({ req: { method: 'POST', headers }, handshake: { 'sec-websocket-protocol': 'bearer, canary-p' } }, 'request');
    const failure = Object.assign(new TypeError('boom'), { token: 'canary-e', code: 'E_BOOM' });
    logger.error({ err: failure }, 'failed');
    logger.child({ bot_token: 'canary-b', component: 'x' }).child({ secret: 'canary-g' }).info('from a grandchild');
    expect(capture.text).not.toMatch(/canary/);
    const [request, failed, child] = capture.entries();
    expect(request).toMatchObject({
      req: {
        method: 'POST',
        headers: {
          authorization: '[redacted]',
          cookie: '[redacted]',
          'x-api-key': '[redacted]',
          'x-slack-signature': '[redacted]',
          accept: 'application/json',
        },
      },
      handshake: { 'sec-websocket-protocol': '[redacted]' },
    });
    // The error is logged as pino logs errors (class, message, stack, own fields), its secret hidden…
    expect(failed!.err).toMatchObject({ type: 'TypeError', message: 'boom', token: '[redacted]', code: 'E_BOOM' });
    expect((failed!.err as { stack: string }).stack).toMatch(/^TypeError: boom/);
    expect(child).toMatchObject({ bot_token: '[redacted]', secret: '[redacted]', component: 'x', msg: 'from a grandchild' });
    // …and nothing the caller holds is changed.
    expect(failure.token).toBe('canary-e');
    expect(headers.authorization).toBe('Bearer canary-a');
  });

  it('filters by level', () => {
    const capture = new LogCapture();
    const logger = createLogger({ level: 'warn', format: 'json', name: 'test', destination: capture });
    logger.info('quiet');
    logger.warn('loud');
    expect(capture.entries().map((entry) => entry.msg)).toEqual(['loud']);
  });
});

describe('access log lines', () => {
  it('never carry Authorization, cookies, API keys, WebSocket tokens or secret query values', async () => {
    const app = await startTestApp();
    try {
      await fetch(`${app.url}/ws/v1/logs?token=canary-query-token&level=INFO`, {
        headers: {
          authorization: 'Bearer canary-bearer',
          cookie: 'session=canary-cookie',
          'x-api-key': 'svc_live_canary-key',
          'sec-websocket-protocol': 'bearer, canary-protocol',
        },
      });
      await fetch(`${app.url}/api/v1/health`);
      await fetch(`${app.url}/api/v1/channels/telegram/webhook?secret_token=canary-webhook-secret`, { method: 'POST' });
      await fetch(`${app.url}/bot123456789:canaryAAHdqTcvCH1vGWJxfSeofSAs0K5PAL/getMe`);
    } finally {
      await app.close();
    }
    expect(app.logs.text).not.toMatch(/canary/);
    const line = app.logs.entries().find((entry) => String(entry.msg).startsWith('GET /ws/v1/logs') && String((entry.req as any).url).startsWith('/ws'));
    expect(line).toMatchObject({ req: { url: '/ws/v1/logs?token=[redacted]&level=INFO', method: 'GET' }, res: { status: 404 } });
    // The line names the request: method, path (no query), status, duration.
    expect(line!.msg).toMatch(/^GET \/ws\/v1\/logs 404 \d+ ms$/);
  });
});

describe("pathRedactor (pino's path forms, compiled once)", () => {
  const redact = pathRedactor(['password', '*.password', 'req.headers.authorization', 'req["x-y"].z', "*['x-api-key']"], '[redacted]');

  it('censors the paths named, at the depth named, and copies only what it changes', () => {
    const line = {
      password: 'a',
      user: { password: 'b', name: 'n', deep: { password: 'kept' } },
      req: { headers: { authorization: 'c', host: 'h' }, 'x-y': { z: 'd' } },
      list: [{ password: 'kept' }],
    };
    const redacted = redact(line);
    expect(redacted).toEqual({
      password: '[redacted]',
      user: { password: '[redacted]', name: 'n', deep: { password: 'kept' } },
      req: { headers: { authorization: '[redacted]', host: 'h' }, 'x-y': { z: '[redacted]' } },
      list: [{ password: 'kept' }],
    });
    expect(redacted.list).toBe(line.list);
    expect(line.user.password).toBe('b');
    const clean = { msg: 'nothing secret', user: { name: 'n' } };
    expect(redact(clean)).toBe(clean);
  });

  it('a wildcard applies under a key that other paths name too', () => {
    expect(redact({ req: { password: 'p', 'x-api-key': 'k', method: 'GET' } })).toEqual({
      req: { password: '[redacted]', 'x-api-key': '[redacted]', method: 'GET' },
    });
  });

  it('censors inside a frozen object (in a copy) and does not walk a long array', () => {
    const frozen = Object.freeze({ password: 'p', name: 'n' });
    expect(redact({ config: frozen })).toEqual({ config: { password: '[redacted]', name: 'n' } });
    expect(frozen.password).toBe('p');
    let walked = false;
    const items = new Proxy(
      Array.from({ length: 10_000 }, (_, index) => index),
      {
        ownKeys: (target) => {
          walked = true;
          return Reflect.ownKeys(target);
        },
      },
    );
    expect(redact({ items }).items).toBe(items);
    expect(walked).toBe(false);
  });

  it('refuses a path it cannot read rather than redact nothing', () => {
    expect(() => pathRedactor(['a..b'], 'x')).toThrow(/cannot read/);
    expect(() => pathRedactor(['a.*.b'], 'x')).toThrow(/a \* only first/);
    expect(() => pathRedactor(['a["b]'], 'x')).toThrow(/cannot read/);
  });
});
