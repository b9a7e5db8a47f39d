import path from 'node:path';
import { startService, type RunningService } from '../../src/main';
import { testEnv } from '../helpers/env';
import { LogCapture } from '../helpers/log-capture';
import { TEST_REDIS_URL, deleteKeys, uniquePrefix } from '../helpers/redis';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir';
import { GENEROUS_RATE_LIMITS } from '../helpers/auth-service';
import { registerUser } from '../helpers/users';
import { openSocket } from '../helpers/ws-client';

afterAll(removeTempDirs);

describe.each(['in-process', 'redis'] as const)('admin log stream (%s)', (driver) => {
  let service: RunningService;
  let base: string;
  const prefix = uniquePrefix('logs');
  let admin: string;
  let user: string;

  beforeAll(async () => {
    const cwd = makeTempDir();
    const extra: Record<string, string> = driver === 'redis' ? { SERVICE_REDIS_URL: TEST_REDIS_URL, SERVICE_REDIS_PREFIX: prefix } : {};
    service = await startService({ env: testEnv(path.join(cwd, 'data'), { ...GENEROUS_RATE_LIMITS, ...extra }), cwd, logDestination: new LogCapture() });
    base = `ws://127.0.0.1:${service.port}/ws/v1/logs`;
    admin = (await registerUser(`http://127.0.0.1:${service.port}/api/v1`, 'root')).token;
    user = (await registerUser(`http://127.0.0.1:${service.port}/api/v1`, 'ann')).token;
  });

  afterAll(async () => {
    await service.stop();
    await deleteKeys(prefix);
  });

  it('streams log_line objects without the session envelope to an admin, filtered by level', async () => {
    const info = await openSocket(`${base}?token=${admin}`);
    const warnings = await openSocket(`${base}?token=${admin}&level=WARNING`);
    await new Promise((resolve) => setTimeout(resolve, 100)); // the Redis subscription settles
    await fetch(`http://127.0.0.1:${service.port}/api/v1/openapi.json`, { headers: { 'x-test': 'canary' } });
    service.logger.warn('disk is getting full');
    const line = await info.next((frame) => String(frame.message).startsWith('GET /api/v1/openapi.json'));
    expect(line).toEqual({
      type: 'log_line',
      level: 'INFO',
      logger: `api:${process.pid}`,
      message: expect.stringMatching(/^GET \/api\/v1\/openapi\.json 200 \d+ ms$/),
      timestamp: expect.any(String),
    });
    const warning = await warnings.next((frame) => frame.message === 'disk is getting full');
    expect(warning.level).toBe('WARNING');
    expect(warnings.frames.filter((frame) => frame.level === 'INFO' || frame.level === 'DEBUG')).toEqual([]);
    info.close();
    warnings.close();
  });

  it('answers a plain-text ping with {"type":"pong"}', async () => {
    const socket = await openSocket(`${base}?token=${admin}&level=ERROR`);
    socket.send('ping');
    expect(await socket.next((frame) => frame.type === 'pong')).toEqual({ type: 'pong' });
    socket.close();
  });

  it('is for admins only: 4001 without a valid token, 4003 for a user; 1008 for an unknown level', async () => {
    expect((await (await openSocket(base)).closed).code).toBe(4001);
    expect((await (await openSocket(`${base}?token=nonsense`)).closed).code).toBe(4001);
    expect((await (await openSocket(`${base}?token=${user}`)).closed).code).toBe(4003);
    expect((await (await openSocket(`${base}?token=${admin}&level=LOUD`)).closed).code).toBe(1008);
    const header = await openSocket(base, { headers: { authorization: `Bearer ${admin}` } });
    header.send('ping');
    await header.next((frame) => frame.type === 'pong');
    header.close();
  });
});
