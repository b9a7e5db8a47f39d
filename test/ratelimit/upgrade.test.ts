import { createServer, type Server } from 'node:http';
import { connect } from 'node:net';
import { loadConfig } from '../../src/config';
import { createLogger } from '../../src/logs/logger';
import { createRateLimiter, writeUpgradeRefusal, type RateLimiter } from '../../src/ratelimit';
import { testEnv } from '../helpers/env';
import { LogCapture } from '../helpers/log-capture';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir';

afterAll(removeTempDirs);

/**
 * A minimal upgrade handler as the WebSocket issue will write it: check, then either refuse with a
 * raw 429 or accept (here a bare 101 stands in for the ws handshake).
 */
async function startUpgradeServer(limiter: RateLimiter): Promise<{ server: Server; port: number }> {
  const server = createServer((_req, res) => res.end());
  server.on('upgrade', async (req, socket) => {
    const verdict = await limiter.checkUpgrade(req);
    if (!verdict.allowed) return writeUpgradeRefusal(socket, verdict.retryAfterS);
    socket.end('HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as { port: number }).port };
}

/** Sends a raw upgrade request and returns everything the server wrote before closing. */
function rawUpgrade(port: number, path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(
        `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
          'Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n',
      );
    });
    let text = '';
    socket.on('data', (chunk) => (text += chunk.toString('utf8')));
    socket.on('end', () => resolve(text));
    socket.on('error', reject);
  });
}

describe('WebSocket upgrades under the default limit', () => {
  let limiter: RateLimiter;
  let server: Server;
  let port: number;

  beforeAll(async () => {
    const { config } = loadConfig({ env: testEnv(makeTempDir(), { SERVICE_RATE_LIMIT_DEFAULT: '3/minute' }), cwd: makeTempDir() });
    limiter = await createRateLimiter({ config, logger: createLogger({ level: 'info', format: 'json', name: 'api', destination: new LogCapture() }) });
    ({ server, port } = await startUpgradeServer(limiter));
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    await limiter.close();
  });

  it('accepts `default` many upgrades per window, then answers a raw 429 with Retry-After', async () => {
    const answers = [];
    // Different session paths share the client's upgrade bucket: paths cannot mint buckets.
    for (let index = 0; index < 5; index += 1) answers.push(await rawUpgrade(port, `/ws/v1/sessions/${index}`));
    expect(answers.slice(0, 3).map((text) => text.split('\r\n')[0])).toEqual(Array(3).fill('HTTP/1.1 101 Switching Protocols'));
    for (const refused of answers.slice(3)) {
      const [head, body] = refused.split('\r\n\r\n') as [string, string];
      expect(head.split('\r\n')[0]).toBe('HTTP/1.1 429 Too Many Requests');
      const retryAfter = Number(/\r\nRetry-After: (\d+)/.exec(head)?.[1]);
      expect(retryAfter).toBeGreaterThanOrEqual(59);
      expect(retryAfter).toBeLessThanOrEqual(60);
      expect(JSON.parse(body)).toMatchObject({ error: { code: 'RATE_LIMIT_EXCEEDED' } });
    }
  });

  it('returns the verdict to the caller: allowed, or refused with whole seconds to wait', async () => {
    const request = { socket: { remoteAddress: '192.0.2.44' }, headers: {} } as Parameters<RateLimiter['checkUpgrade']>[0];
    const verdicts = [];
    for (let index = 0; index < 4; index += 1) verdicts.push(await limiter.checkUpgrade(request, '/ws/v1/logs'));
    expect(verdicts.slice(0, 3)).toEqual([{ allowed: true }, { allowed: true }, { allowed: true }]);
    expect(verdicts[3]).toEqual({ allowed: false, retryAfterS: 60 });
  });
});
