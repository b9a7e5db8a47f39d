import { createLogger } from '../../src/logs/logger';
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
