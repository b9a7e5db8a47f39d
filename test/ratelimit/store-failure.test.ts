import { Writable } from 'node:stream';
import { createLogger } from '../../src/logs/logger';
import { StoreFailureLog } from '../../src/ratelimit/store-failure-log';
import { burst, countOf, startRateLimitedApp, testRoutes, type RateLimitedApp } from '../helpers/rate-limited-app';
import { startOwnRedis, type OwnRedis } from '../helpers/redis-server';
import { uniquePrefix } from '../helpers/redis';
import { removeTempDirs } from '../helpers/temp-dir';
import { jsonBody } from '../helpers/http';

afterAll(removeTempDirs);

const PASSWORD = 'rl-s3cret-pw';
const STORE_WARNING = 'rate-limit store unavailable: requests pass without rate limiting (fail open)';

describe('the Redis store stops mid-test (own redis-server, killed)', () => {
  let redis: OwnRedis;
  let app: RateLimitedApp;

  beforeAll(async () => {
    redis = await startOwnRedis({ password: PASSWORD });
    app = await startRateLimitedApp(
      { SERVICE_SHARED_STORE_URL: redis.url, SERVICE_REDIS_PREFIX: uniquePrefix('failure'), SERVICE_RATE_LIMIT_AUTH_LOGIN: '5/minute' },
      { modules: [testRoutes] },
    );
  });
  afterAll(async () => {
    await app.close();
    await redis.kill();
  });

  const login = () => fetch(`${app.url}/api/v1/test/auth_login`, jsonBody({}));

  it('enforces while Redis is up, then fails open: every request passes, no 5xx, one warning', async () => {
    expect(app.logs.text).toContain(`"rate_limit_store":"redis redis://:***@127.0.0.1:${redis.port}"`);
    const before = await burst(20, login);
    expect(countOf(before, 200)).toBe(5);
    expect(countOf(before, 429)).toBe(15);

    await redis.kill();
    // A store that queued or retried commands would hang here until the test times out.
    const during = [...(await burst(30, login)), ...(await burst(30, login))];
    expect(countOf(during, 200)).toBe(60); // the bucket was full, yet everything passes
    expect(during.filter((status) => status >= 500)).toEqual([]);

    const warnings = app.logs.entries().filter((entry) => entry.msg === STORE_WARNING);
    expect(warnings).toHaveLength(1); // not one per request (default interval: 60 s)
    expect(warnings[0]).toMatchObject({ level: 'warn', err: expect.any(String) });
    expect(app.logs.text).not.toContain(PASSWORD);
  });
});

describe('the Redis store hangs (own redis-server, paused with SIGSTOP)', () => {
  let redis: OwnRedis;
  let app: RateLimitedApp;

  beforeAll(async () => {
    redis = await startOwnRedis();
    app = await startRateLimitedApp(
      { SERVICE_SHARED_STORE_URL: redis.url, SERVICE_REDIS_PREFIX: uniquePrefix('hang'), SERVICE_RATE_LIMIT_AUTH_LOGIN: '2/minute' },
      { modules: [testRoutes] },
    );
  });
  afterAll(async () => {
    redis.child.kill('SIGCONT');
    await app.close();
    await redis.kill();
  });

  it('times commands out and lets requests pass instead of waiting for Redis', async () => {
    const login = () => fetch(`${app.url}/api/v1/test/auth_login`, jsonBody({}));
    expect(countOf(await burst(4, login), 200)).toBe(2); // the bucket is full
    redis.child.kill('SIGSTOP'); // the connection stays open, nothing answers
    // Without a command timeout these would wait for Redis and then be refused (429).
    const during = await burst(10, login);
    expect(countOf(during, 200)).toBe(10);
    expect(app.logs.entries().filter((entry) => entry.msg === STORE_WARNING)).toHaveLength(1);
  });
});

describe('StoreFailureLog: at most one warning per interval', () => {
  it('warns at the first failure, suppresses the rest of the interval, then warns with the count', () => {
    const lines: Record<string, unknown>[] = [];
    const destination = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        lines.push(JSON.parse(chunk.toString('utf8')) as Record<string, unknown>);
        callback();
      },
    });
    const logger = createLogger({ level: 'info', format: 'json', name: 'api', destination });
    let now = 0;
    const log = new StoreFailureLog(logger, 1_000, () => now);
    const warnings = () => lines.filter((line) => line.msg === STORE_WARNING);

    log.failure(new Error('connection refused'));
    for (now = 1; now < 1_000; now += 100) log.failure(new Error('connection refused'));
    expect(warnings()).toHaveLength(1);
    expect(warnings()[0]).toMatchObject({ err: 'connection refused', suppressed_since_last_warning: 0 });

    now = 1_000;
    log.failure(new Error('timeout'));
    expect(warnings()).toHaveLength(2);
    expect(warnings()[1]).toMatchObject({ err: 'timeout', suppressed_since_last_warning: 10 });

    log.success();
    log.success();
    expect(lines.filter((line) => line.msg === 'rate-limit store is reachable again: rate limiting resumed')).toHaveLength(1);
  });
});
