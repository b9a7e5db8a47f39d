import { request as httpRequest } from 'node:http';
import { RATE_LIMIT_KEYS } from '../../src/core/principal';
import { jsonBody, request } from '../helpers/http';
import { burst, countOf, startRateLimitedApp, testRoutes, type RateLimitedApp } from '../helpers/rate-limited-app';
import { TEST_REDIS_URL, uniquePrefix } from '../helpers/redis';
import { removeTempDirs } from '../helpers/temp-dir';

afterAll(removeTempDirs);

let app: RateLimitedApp | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

const post = (url: string, headers: Record<string, string> = {}) => fetch(url, jsonBody({}, headers));

const backends: [string, () => Record<string, string>][] = [
  ['memory', () => ({})],
  ['redis', () => ({ SERVICE_SHARED_STORE_URL: TEST_REDIS_URL, SERVICE_REDIS_PREFIX: uniquePrefix('http') })],
];

describe.each(backends)('over HTTP with the %s store', (_name, backendEnv) => {
  it('lets exactly 5 of 50 parallel logins through (auth_login 5/minute)', async () => {
    app = await startRateLimitedApp({ ...backendEnv() }, { modules: [testRoutes] });
    const statuses = await burst(50, () => post(`${app!.url}/api/v1/test/auth_login`));
    expect(countOf(statuses, 200)).toBe(5);
    expect(countOf(statuses, 429)).toBe(45);
  });

  it('counts each request once, under its endpoint key only (default 3, auth_login 5)', async () => {
    app = await startRateLimitedApp({ ...backendEnv(), SERVICE_RATE_LIMIT_DEFAULT: '3/minute' }, { modules: [testRoutes] });
    // If the default limit also counted logins, only 3 would pass.
    expect(countOf(await burst(20, () => post(`${app!.url}/api/v1/test/auth_login`)), 200)).toBe(5);
    // Other routes have their own buckets, untouched by the logins.
    expect(countOf(await burst(10, () => fetch(`${app!.url}/api/v1/health`)), 200)).toBe(3);
    expect(countOf(await burst(10, () => fetch(`${app!.url}/api/v1/test/items/1`)), 200)).toBe(3);
  });
});

describe('per-route keys', () => {
  it("applies each key's own limit to the endpoints declaring it", async () => {
    app = await startRateLimitedApp(
      {
        SERVICE_RATE_LIMIT_AUTH_REGISTER: '1/hour',
        SERVICE_RATE_LIMIT_AUTH_LOGIN: '2/minute',
        SERVICE_RATE_LIMIT_AUTH_REFRESH: '3/minute',
        SERVICE_RATE_LIMIT_SAML_ACS: '4/minute',
        SERVICE_RATE_LIMIT_DEFAULT: '6/minute',
      },
      { modules: [testRoutes] },
    );
    const expected = { auth_register: 1, auth_login: 2, auth_refresh: 3, saml_acs: 4 };
    for (const [key, limit] of Object.entries(expected)) {
      expect({ key, passed: countOf(await burst(12, () => post(`${app!.url}/api/v1/test/${key}`)), 200) }).toEqual({ key, passed: limit });
    }
    expect(countOf(await burst(12, () => fetch(`${app!.url}/api/v1/test/items/7`)), 200)).toBe(6);
    expect(RATE_LIMIT_KEYS).toHaveLength(6); // the spec's five and channel_webhooks (test/ratelimit/channel-webhooks.test.ts)
  });

  it('buckets by route template: /items/{id} with different ids shares one bucket', async () => {
    app = await startRateLimitedApp({ SERVICE_RATE_LIMIT_DEFAULT: '4/minute' }, { modules: [testRoutes] });
    const statuses = await burst(20, (index) => fetch(`${app!.url}/api/v1/test/items/${index}`));
    expect(countOf(statuses, 200)).toBe(4);
  });

  it('puts unknown paths, docs and wrong methods in one shared bucket, so they cannot mint buckets', async () => {
    app = await startRateLimitedApp({ SERVICE_RATE_LIMIT_DEFAULT: '4/minute' }, { modules: [testRoutes] });
    const statuses = await burst(20, (index) => fetch(`${app!.url}/no/such/path/${index}`));
    expect(countOf(statuses, 404)).toBe(4);
    expect(countOf(statuses, 429)).toBe(16);
    // The same bucket: the docs and a wrong method on a real path are refused now too.
    expect((await fetch(`${app.url}/api/v1/openapi.json`)).status).toBe(429);
    expect((await fetch(`${app.url}/api/v1/test/auth_login`)).status).toBe(429); // GET: would be 405
    // Declared endpoints keep their own buckets.
    expect((await fetch(`${app.url}/api/v1/health`)).status).toBe(200);
  });

  it('refuses before reading the body: a refused request with broken JSON gets 429, not 400', async () => {
    app = await startRateLimitedApp({ SERVICE_RATE_LIMIT_AUTH_LOGIN: '1/minute' }, { modules: [testRoutes] });
    const broken = { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{not json' };
    expect((await fetch(`${app.url}/api/v1/test/auth_login`, broken)).status).toBe(400);
    expect((await fetch(`${app.url}/api/v1/test/auth_login`, broken)).status).toBe(429);
  });
});

describe('what the client receives', () => {
  it('sends RateLimit-* on allowed responses and the 429 envelope with Retry-After when refused', async () => {
    app = await startRateLimitedApp({ SERVICE_RATE_LIMIT_AUTH_LOGIN: '2/minute' }, { modules: [testRoutes] });
    const url = `${app.url}/api/v1/test/auth_login`;
    const first = await request(url, jsonBody({}));
    expect(first.status).toBe(200);
    expect(first.headers.get('ratelimit-limit')).toBe('2');
    expect(first.headers.get('ratelimit-remaining')).toBe('1');
    expect(first.headers.get('ratelimit-reset')).toBe('60');
    expect(first.headers.get('retry-after')).toBeNull();

    const second = await request(url, jsonBody({}));
    expect(second.status).toBe(200);
    expect(second.headers.get('ratelimit-remaining')).toBe('0');

    const refused = await request(url, jsonBody({}));
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({
      data: null,
      error: {
        code: 'RATE_LIMIT_EXCEEDED',
        message: expect.stringMatching(/^Too many requests; try again in \d+ s\.$/),
        details: { retry_after_s: expect.any(Number) },
      },
      meta: { request_id: refused.headers.get('x-request-id'), timestamp: expect.any(String) },
    });
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(59);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(refused.body.error.details.retry_after_s).toBe(retryAfter);
    expect(refused.headers.get('ratelimit-limit')).toBe('2');
    expect(refused.headers.get('ratelimit-remaining')).toBe('0');
    expect(refused.headers.get('ratelimit-reset')).toBe(String(retryAfter));
  });

  it('lets browsers read the headers (CORS exposes them)', async () => {
    app = await startRateLimitedApp({}, { modules: [testRoutes] });
    const response = await fetch(`${app.url}/api/v1/health`, { headers: { origin: 'http://localhost:5173' } });
    const exposed = response.headers.get('access-control-expose-headers') ?? '';
    for (const name of ['Retry-After', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset']) expect(exposed).toContain(name);
  });

  it('exposes no limiter state: no endpoint, nothing in the OpenAPI document', async () => {
    app = await startRateLimitedApp({}, { modules: [testRoutes] });
    const openapi = await request(`${app.url}/api/v1/openapi.json`);
    expect(Object.keys(openapi.body.paths).filter((path) => /rate|limit/i.test(path))).toEqual([]);
  });
});

describe('client IP', () => {
  const withForwardedFor = (url: string, value: string) => fetch(url, { headers: { 'x-forwarded-for': value } });

  it("ignores X-Forwarded-For from an untrusted peer: forged headers share the peer's bucket", async () => {
    app = await startRateLimitedApp({ SERVICE_RATE_LIMIT_DEFAULT: '3/minute' }, { modules: [testRoutes] });
    const statuses = await burst(10, (index) => withForwardedFor(`${app!.url}/api/v1/health`, `198.51.100.${index}`));
    expect(countOf(statuses, 200)).toBe(3);
  });

  it('ignores X-Forwarded-For when proxies are trusted but the peer is not one of them', async () => {
    app = await startRateLimitedApp({ SERVICE_RATE_LIMIT_DEFAULT: '3/minute', SERVICE_TRUSTED_PROXY_CIDRS: '10.0.0.0/8' }, { modules: [testRoutes] });
    const statuses = await burst(10, (index) => withForwardedFor(`${app!.url}/api/v1/health`, `198.51.100.${index}`));
    expect(countOf(statuses, 200)).toBe(3);
  });

  it('resolves the client through a trusted proxy (peer 127.0.0.1 trusted): one bucket per client', async () => {
    app = await startRateLimitedApp({ SERVICE_RATE_LIMIT_DEFAULT: '3/minute', SERVICE_TRUSTED_PROXY_CIDRS: '127.0.0.1/32' }, { modules: [testRoutes] });
    const url = `${app.url}/api/v1/health`;
    // Ten different clients behind the proxy: each has a fresh bucket.
    expect(countOf(await burst(10, (index) => withForwardedFor(url, `198.51.100.${index}`)), 200)).toBe(10);
    // One client that prepends forged hops: the walk stops at the first untrusted hop, its real address.
    expect(countOf(await burst(10, (index) => withForwardedFor(url, `203.0.113.${index}, 192.0.2.77`)), 200)).toBe(3);
    // The proxy's own address is not the bucket: a request without the header is the proxy itself.
    expect((await fetch(url)).status).toBe(200);
  });

  it('walks through several trusted proxies, right to left', async () => {
    app = await startRateLimitedApp(
      { SERVICE_RATE_LIMIT_DEFAULT: '2/minute', SERVICE_TRUSTED_PROXY_CIDRS: '127.0.0.1/32, 10.0.0.0/8' },
      { modules: [testRoutes] },
    );
    const url = `${app.url}/api/v1/health`;
    // Client 192.0.2.5 through an inner proxy 10.1.2.3 (trusted), then the peer (trusted), however
    // the inner proxy varies and whatever the client forged on the left.
    const statuses = await burst(8, (index) => withForwardedFor(url, `6.6.6.${index}, 192.0.2.5, 10.1.2.${index}`));
    expect(countOf(statuses, 200)).toBe(2);
  });

  it('treats an IPv4-mapped peer (dual-stack socket) as the IPv4 address, so trust and buckets match', async () => {
    app = await startRateLimitedApp(
      { SERVICE_RATE_LIMIT_DEFAULT: '2/minute', SERVICE_TRUSTED_PROXY_CIDRS: '127.0.0.1/32' },
      { modules: [testRoutes], host: '::' },
    );
    // Over IPv4 to a socket listening on "::", the peer is ::ffff:127.0.0.1.
    const statuses = await burst(6, (index) => withForwardedFor(`${app!.url}/api/v1/health`, `198.51.100.${index}`));
    expect(countOf(statuses, 200)).toBe(6);
    const check = await app.limiter.check(fakeRequest('::ffff:192.0.2.9'), 'default', 'GET /probe');
    const again = await app.limiter.check(fakeRequest('192.0.2.9'), 'default', 'GET /probe');
    expect([check.result?.remaining, again.result?.remaining]).toEqual([1, 0]);
  });
});

function fakeRequest(remoteAddress: string) {
  return { socket: { remoteAddress }, headers: {} } as unknown as Parameters<RateLimitedApp['limiter']['check']>[0];
}

describe('robustness', () => {
  it("answers a HEAD request of a GET endpoint under that endpoint's bucket", async () => {
    app = await startRateLimitedApp({ SERVICE_RATE_LIMIT_DEFAULT: '2/minute' }, { modules: [testRoutes] });
    const head = () =>
      new Promise<number>((resolve, reject) => {
        const req = httpRequest(`${app!.url}/api/v1/health`, { method: 'HEAD' }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.on('error', reject);
        req.end();
      });
    expect([await head(), await head(), await head()]).toEqual([200, 200, 429]);
    expect((await fetch(`${app.url}/api/v1/health`)).status).toBe(429); // same bucket as GET
  });
});
