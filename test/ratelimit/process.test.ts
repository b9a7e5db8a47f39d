import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { testEnv } from '../helpers/env';
import { readyUrl, spawnService, type ServiceProcess } from '../helpers/process';
import { burst, countOf } from '../helpers/rate-limited-app';
import { TEST_REDIS_URL, uniquePrefix } from '../helpers/redis';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir';

afterAll(removeTempDirs);

const running: ServiceProcess[] = [];
afterEach(async () => {
  for (const service of running.splice(0)) {
    service.child.kill('SIGTERM');
    await service.exited;
  }
});

/** `node dist/src/main.js` in a fresh directory (its own SQLite), optionally with a config.yaml. */
function start(extraEnv: Record<string, string>, yamlText?: string): ServiceProcess {
  const cwd = makeTempDir();
  if (yamlText !== undefined) writeFileSync(path.join(cwd, 'config.yaml'), yamlText);
  const service = spawnService({ ...testEnv(path.join(cwd, 'data')), ...extraEnv }, { cwd });
  running.push(service);
  return service;
}

describe('real processes', () => {
  it('two processes sharing one Redis let exactly 5 of 50 parallel requests through in total', async () => {
    const env = {
      SERVICE_SHARED_STORE_URL: TEST_REDIS_URL,
      SERVICE_REDIS_PREFIX: uniquePrefix('replicas'),
      SERVICE_RATE_LIMIT_DEFAULT: '5/minute',
    };
    const [first, second] = [start(env), start(env)];
    const urls = await Promise.all([readyUrl(first!), readyUrl(second!)]);
    const statuses = await burst(50, (index) => fetch(`${urls[index % 2]}/api/v1/health`));
    expect(countOf(statuses, 200)).toBe(5);
    expect(countOf(statuses, 429)).toBe(45);
  });

  it('logs the active backend at startup with the password redacted', async () => {
    const service = start({
      SERVICE_SHARED_STORE_URL: 'redis://:not-the-real-pw@127.0.0.1:6379',
      SERVICE_REDIS_PREFIX: uniquePrefix('banner'),
    });
    await readyUrl(service);
    const line = await service.waitForLog((entry) => entry.msg === 'rate limiting enabled');
    expect(line.rate_limit_store).toBe('redis redis://:***@127.0.0.1:6379');
    expect(service.stdout() + service.stderr()).not.toContain('not-the-real-pw');
  });

  it('uses process memory by default and says so', async () => {
    const service = start({});
    await readyUrl(service);
    const line = await service.waitForLog((entry) => entry.msg === 'rate limiting enabled');
    expect(line.rate_limit_store).toMatch(/^memory/);
  });

  it.each([
    [
      'SERVICE_RATE_LIMIT_AUTH_LOGIN=5/fortnight',
      { SERVICE_RATE_LIMIT_AUTH_LOGIN: '5/fortnight' },
      undefined,
      /api\.rate_limits\.auth_login \(from SERVICE_RATE_LIMIT_AUTH_LOGIN\): unknown window "fortnight"/,
    ],
    ['a malformed spec in config.yaml', {}, 'api:\n  rate_limits:\n    default: lots\n', /api\.rate_limits\.default \(from config\.yaml\): expected "<N>\//],
    [
      'an invalid trusted proxy CIDR',
      { SERVICE_TRUSTED_PROXY_CIDRS: '10.0.0.0/40' },
      undefined,
      /api\.trusted_proxy_cidrs \(from SERVICE_TRUSTED_PROXY_CIDRS\): "10\.0\.0\.0\/40" is not a CIDR/,
    ],
  ])('refuses to start with %s: exit 78, one line', async (_label, env, yamlText, expected) => {
    const service = start(env, yamlText);
    expect(await service.exited).toBe(78);
    const lines = service.stderr().trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^switchboard: configuration error: /);
    expect(lines[0]).toMatch(expected);
  });
});
