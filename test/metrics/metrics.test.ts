import { startService, type RunningService } from '../../src/main';
import { ConfigError } from '../../src/config';
import { ScriptedProvider } from '../fakes/scripted-provider';
import { GENEROUS_RATE_LIMITS } from '../helpers/auth-service';
import { testEnv } from '../helpers/env';
import { jsonBody, request } from '../helpers/http';
import { LogCapture } from '../helpers/log-capture';
import { scrape, type Scrape } from '../helpers/scrape';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir';
import { registerUser } from '../helpers/users';
import { openSocket, type TestSocket } from '../helpers/ws-client';

const TOKEN = 'metrics-token-0123456789';

async function start(extra: Record<string, string>, provider = new ScriptedProvider()): Promise<RunningService> {
  return startService({ env: testEnv(makeTempDir(), { ...GENEROUS_RATE_LIMITS, ...extra }), cwd: makeTempDir(), logDestination: new LogCapture(), provider });
}

afterAll(() => removeTempDirs());

describe('/metrics on the API port, behind its bearer token', () => {
  let service: RunningService;
  let base: string;
  let api: string;
  let token: string;
  let sessionId: string;
  let socket: TestSocket;

  beforeAll(async () => {
    service = await start({ SERVICE_METRICS_ENABLED: 'true', SERVICE_METRICS_TOKEN: TOKEN });
    base = `http://127.0.0.1:${service.port}`;
    api = `${base}/api/v1`;
    token = (await registerUser(api, 'metrics')).token;
    sessionId = (await request(`${api}/sessions`, jsonBody({}, { authorization: `Bearer ${token}` }))).body.data.id;
    socket = await openSocket(`ws://127.0.0.1:${service.port}/ws/v1/sessions/${sessionId}`, { headers: { authorization: `Bearer ${token}` } });
    await socket.nextOfType('agent_state');
  });

  afterAll(async () => {
    socket.close();
    await service.stop();
  });

  async function turnOverSocket(text: string): Promise<void> {
    const before = socket.frames.at(-1)?.seq ?? 0;
    socket.send({ type: 'user_message', payload: { text, mode: 'normal' } });
    await socket.nextOfType('done', before);
  }

  async function turnOverRest(text: string): Promise<void> {
    const before = socket.frames.at(-1)?.seq ?? 0;
    expect((await request(`${api}/sessions/${sessionId}/messages`, jsonBody({ text }, { authorization: `Bearer ${token}` }))).status).toBe(202);
    await socket.nextOfType('done', before);
  }

  it('refuses a scrape without the token, or with another, in the documented error shape', async () => {
    const attempts: Record<string, string>[] = [{}, { authorization: 'Bearer not-the-token-at-all' }, { authorization: `Basic ${TOKEN}` }];
    for (const headers of attempts) {
      const response = await fetch(`${base}/metrics`, { headers });
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toContain('Bearer');
      const body = (await response.json()) as { error: { code: string } };
      expect(body.error.code).toBe('UNAUTHORIZED');
      expect(JSON.stringify(body)).not.toContain(TOKEN);
    }
    expect((await fetch(`${base}/metrics`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(405);
  });

  it('counts a turn: every stage, the turn, the model, tokens, frames, HTTP by route template', async () => {
    const before = await scrape(`${base}/metrics`, TOKEN);
    await turnOverSocket('hello over the socket');
    await turnOverRest('hello over REST');
    const after = await scrape(`${base}/metrics`, TOKEN);

    const moved = (name: string, labels: Record<string, string> = {}) => after.value(name, labels) - valueOr0(before, name, labels);
    expect(moved('switchboard_turns_started_total', { channel: 'web', workflow: 'none' })).toBe(2);
    expect(moved('switchboard_turns_ended_total', { channel: 'web', outcome: 'done' })).toBe(2);
    for (const stage of ['accepted', 'queued', 'routed', 'first_token', 'delivered', 'finished']) {
      expect({ stage, moved: moved('switchboard_turn_stage_seconds', { stage, channel: 'web' }) }).toEqual({ stage, moved: 2 });
    }
    expect(moved('switchboard_turn_first_answer_seconds', { channel: 'web' })).toBe(2);
    expect(moved('switchboard_model_calls_total', { model: 'scripted-1', outcome: 'ok' })).toBe(2);
    expect(moved('switchboard_model_first_token_seconds', { model: 'scripted-1' })).toBe(2);
    // The scripted model reports 11 input tokens and one output token per piece (4).
    expect(moved('switchboard_model_tokens_total', { model: 'scripted-1', direction: 'input' })).toBe(22);
    expect(moved('switchboard_model_tokens_total', { model: 'scripted-1', direction: 'output' })).toBe(8);
    expect(moved('switchboard_websocket_frames_received_total', { channel: 'web', type: 'user_message' })).toBe(1);
    expect(moved('switchboard_websocket_frames_sent_total', { channel: 'web' })).toBeGreaterThanOrEqual(2 * 4);
    expect(after.value('switchboard_websocket_connections', { channel: 'web', role: 'api' })).toBe(1);
    expect(moved('switchboard_http_requests_total', { method: 'POST', route: '/api/v1/sessions/{id}/messages', status: '202' })).toBe(1);
    expect(after.value('switchboard_queue_depth')).toBe(0);
    // Process health from prom-client's default metrics.
    expect(after.value('process_resident_memory_bytes')).toBeGreaterThan(0);
    expect(after.families.has('nodejs_eventloop_lag_p99_seconds')).toBe(true);
    expect(after.labelValues('switchboard_turns_started_total', 'role')).toEqual(['api']);
  });

  it('labels requests by route template, never by raw path or id', async () => {
    const missing = '00000000-0000-4000-8000-000000000000';
    await request(`${api}/sessions/${missing}`, { headers: { authorization: `Bearer ${token}` } });
    await request(`${api}/no-such-thing/${missing}`);
    const scraped = await scrape(`${base}/metrics`, TOKEN);
    const routes = scraped.labelValues('switchboard_http_requests_total', 'route');
    expect(routes).toContain('/api/v1/sessions/{id}');
    expect(routes).toContain('unmatched');
    expect(routes.some((route) => route.includes(missing) || route.includes(sessionId))).toBe(false);
  });
});

describe('/metrics on a port of its own', () => {
  it('serves there (no token needed on loopback) and not on the API port', async () => {
    const service = await start({ SERVICE_METRICS_ENABLED: 'true', SERVICE_METRICS_PORT: '0' });
    try {
      expect(service.metricsPort).toEqual(expect.any(Number));
      const scraped = await scrape(`http://127.0.0.1:${service.metricsPort}/metrics`);
      expect(scraped.families.has('switchboard_http_requests_total')).toBe(true);
      expect(await (await fetch(`http://127.0.0.1:${service.port}/metrics`)).text()).not.toContain('switchboard_');
      expect((await fetch(`http://127.0.0.1:${service.metricsPort}/other`)).status).toBe(404);
    } finally {
      await service.stop();
    }
  });

  it('asks for its token there too when one is set', async () => {
    const service = await start({ SERVICE_METRICS_ENABLED: 'true', SERVICE_METRICS_PORT: '0', SERVICE_METRICS_TOKEN: TOKEN });
    try {
      expect((await fetch(`http://127.0.0.1:${service.metricsPort}/metrics`)).status).toBe(401);
      await scrape(`http://127.0.0.1:${service.metricsPort}/metrics`, TOKEN);
    } finally {
      await service.stop();
    }
  });
});

describe('metrics off (the default) and misconfigured', () => {
  it("serves no metrics when off (/metrics is then only the web UI's page fallback)", async () => {
    const service = await start({});
    try {
      expect(service.metricsPort).toBeNull();
      const response = await fetch(`http://127.0.0.1:${service.port}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
      expect(response.headers.get('content-type')).not.toContain('text/plain');
      expect(await response.text()).not.toContain('switchboard_');
    } finally {
      await service.stop();
    }
  });

  it('refuses to start with /metrics on the API port and no token', async () => {
    await expect(start({ SERVICE_METRICS_ENABLED: 'true' })).rejects.toThrow(ConfigError);
    await expect(start({ SERVICE_METRICS_ENABLED: 'true' })).rejects.toThrow(/SERVICE_METRICS_TOKEN/);
  });
});

describe('rate-limit refusals', () => {
  it('are counted by the limit that refused', async () => {
    const service = await start({ SERVICE_METRICS_ENABLED: 'true', SERVICE_METRICS_TOKEN: TOKEN, SERVICE_RATE_LIMIT_AUTH_LOGIN: '1/minute' });
    try {
      const login = () => request(`http://127.0.0.1:${service.port}/api/v1/auth/login`, jsonBody({ username: 'nobody', password: 'wrong-password' }));
      await login();
      expect((await login()).status).toBe(429);
      const scraped = await scrape(`http://127.0.0.1:${service.port}/metrics`, TOKEN);
      expect(scraped.value('switchboard_rate_limit_refusals_total', { limit: 'auth_login' })).toBe(1);
    } finally {
      await service.stop();
    }
  });
});

function valueOr0(scraped: Scrape, name: string, labels: Record<string, string>): number {
  return scraped.families.has(name) ? scraped.value(name, labels) : 0;
}
