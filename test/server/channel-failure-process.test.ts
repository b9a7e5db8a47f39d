import { createServer, type Server } from 'node:net';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { OldRedisServer } from '../fakes/old-redis-server';
import { FakeSlackApi } from '../fakes/slack-api';
import { testEnv } from '../helpers/env';
import { readyUrl, spawnService, type ServiceProcess } from '../helpers/process';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir';

/**
 * The built hub as a process: a Slack channel that cannot start (wrong token, unreachable API) is
 * reported and retried while the hub keeps serving; startup failures of the hub itself (a taken
 * port, an unreachable Redis) end it with one line that says what to do, and no stack trace.
 */
const WRONG_TOKEN = 'xoxb-wrong-token-never-logged';
const SIGNING_SECRET = 'signing-secret-never-logged';

let slack: FakeSlackApi;
const running: ServiceProcess[] = [];

beforeAll(async () => {
  slack = new FakeSlackApi();
  await slack.start();
  slack.refusedTokens.add(WRONG_TOKEN);
});

afterAll(async () => {
  for (const service of running) service.child.kill('SIGKILL');
  await slack.stop();
  removeTempDirs();
});

function start(env: Record<string, string>): ServiceProcess {
  const cwd = makeTempDir();
  const service = spawnService(testEnv(path.join(cwd, 'data'), env), { cwd });
  running.push(service);
  return service;
}

/** A loopback port nothing listens on (taken, then released). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function stillServing(service: ServiceProcess, url: string): Promise<void> {
  expect(service.child.exitCode).toBeNull();
  expect((await fetch(`${url}/api/v1/health`)).status).toBe(200);
}

describe('a Slack channel that cannot start does not take the hub down', () => {
  it('a wrong bot token (invalid_auth): reported failed in readiness, retried, the hub keeps serving', async () => {
    const service = start({ SERVICE_SLACK_BOT_TOKEN: WRONG_TOKEN, SERVICE_SLACK_SIGNING_SECRET: SIGNING_SECRET, SERVICE_SLACK_API_URL: slack.url });
    const url = await readyUrl(service);
    const failure = await service.waitForLog((entry) => entry.channel === 'slack' && entry.level === 'error');
    expect(failure.msg).toMatch(/^slack channel failed: auth\.test failed: invalid_auth; retrying in 2 s/);
    expect(failure.error).toBe('auth.test failed: invalid_auth');

    const ready = await fetch(`${url}/api/v1/health/ready`);
    expect(ready.status).toBe(200);
    const body = (await ready.json()) as any;
    expect(body.data.channels.slack).toEqual({ status: 'failed', mode: 'events', error: 'auth.test failed: invalid_auth' });
    expect(body.data.channels.web).toEqual({ status: 'running', mode: 'rest+websocket' });
    // Slack is asked to deliver its events again later, not told they were taken in.
    expect((await fetch(`${url}/api/v1/channels/slack/events`, { method: 'POST', body: '{}' })).status).toBe(503);

    // The retry (2 s later) fails the same way and is logged; the process is still up after it.
    await service.waitForLog((entry) => entry.channel === 'slack' && entry.level === 'error' && entry.failures === 2, 10_000);
    await stillServing(service, url);
    expect(slack.callsOf('auth.test').length).toBeGreaterThanOrEqual(2);
    expect(service.stdout() + service.stderr()).not.toContain(WRONG_TOKEN);
    expect(service.stdout() + service.stderr()).not.toContain(SIGNING_SECRET);

    service.child.kill('SIGTERM');
    expect(await service.exited).toBe(0);
  });

  it('an unreachable Slack API: reported failed with the network error, the hub keeps serving', async () => {
    const port = await closedPort();
    const service = start({
      SERVICE_SLACK_BOT_TOKEN: WRONG_TOKEN,
      SERVICE_SLACK_SIGNING_SECRET: SIGNING_SECRET,
      SERVICE_SLACK_API_URL: `http://127.0.0.1:${port}/api/`,
    });
    const url = await readyUrl(service);
    const ready = (await (await fetch(`${url}/api/v1/health/ready`)).json()) as any;
    expect(ready.data.channels.slack.status).toBe('failed');
    expect(ready.data.channels.slack.error).toMatch(/^auth\.test failed: .*ECONNREFUSED/);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    await stillServing(service, url);
    service.child.kill('SIGTERM');
    expect(await service.exited).toBe(0);
  });
});

describe('startup failures of the hub itself: one line, what to do, no stack trace', () => {
  let occupier: Server;

  afterAll(() => new Promise<void>((resolve) => (occupier ? occupier.close(() => resolve()) : resolve())));

  it('a taken port says which one and how to pick another', async () => {
    occupier = createServer();
    await new Promise<void>((resolve) => occupier.listen(0, '127.0.0.1', resolve));
    const { port } = occupier.address() as AddressInfo;
    const service = start({ SERVICE_PORT: String(port) });
    expect(await service.exited).toBe(1);
    const lines = service.stderr().trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(new RegExp(`^switchboard: could not start: port ${port} on 127\\.0\\.0\\.1 is already in use`));
    expect(lines[0]).toContain(`SERVICE_PORT=${port + 1} npm start`);
    expect(service.stderr()).not.toMatch(/\n\s+at /);
  });

  it('an unreachable Redis names its URL, password hidden', async () => {
    const port = await closedPort();
    const service = start({ SERVICE_REDIS_URL: `redis://:redis-password-never-shown@127.0.0.1:${port}` });
    expect(await service.exited).toBe(1);
    const lines = service.stderr().trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`could not start: Redis at redis://:***@127.0.0.1:${port} (SERVICE_REDIS_URL) is unreachable: connect ECONNREFUSED`);
    expect(lines[0]).toContain('unset SERVICE_REDIS_URL');
    expect(service.stdout() + service.stderr()).not.toContain('redis-password-never-shown');
  });

  it('a Redis older than 6.2 is refused at once, naming the version found and the one needed', async () => {
    const old = new OldRedisServer('6.0.16');
    const url = await old.start();
    try {
      const service = start({ SERVICE_REDIS_URL: url });
      expect(await service.exited).toBe(1);
      const lines = service.stderr().trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain(`could not start: Redis at ${url} (SERVICE_REDIS_URL) is version 6.0; the hub needs Redis 6.2 or newer.`);
      expect(old.commands).toContain('INFO');
    } finally {
      await old.stop();
    }
  });
});
