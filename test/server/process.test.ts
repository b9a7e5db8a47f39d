import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { TEST_JWT_SECRET, testEnv } from '../helpers/env';
import { readyUrl, spawnService } from '../helpers/process';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir';

afterAll(removeTempDirs);

/** Starts `node dist/src/main.js` in a fresh directory (no config.yaml, no .env unless written). */
function start(extraEnv: Record<string, string> = {}, files: Record<string, string> = {}) {
  const cwd = makeTempDir();
  for (const [name, text] of Object.entries(files)) writeFileSync(path.join(cwd, name), text);
  return spawnService({ ...testEnv(path.join(cwd, 'data')), ...extraEnv }, { cwd });
}

describe('startup refusals: one line naming the key, exit code 78', () => {
  const cases: [string, Record<string, string>, Record<string, string>, RegExp][] = [
    ['a missing SERVICE_JWT_SECRET', { SERVICE_JWT_SECRET: '' }, {}, /SERVICE_JWT_SECRET: is required/],
    ['a short SERVICE_JWT_SECRET', { SERVICE_JWT_SECRET: 'abcdef' }, {}, /SERVICE_JWT_SECRET: must be a hex string of at least 32/],
    ['unparsable YAML', {}, { 'config.yaml': 'server: [oops\n' }, /config\.yaml: not valid YAML at line/],
    ['an invalid value', { SERVICE_PORT: '99999' }, {}, /server\.port \(from SERVICE_PORT\)/],
  ];
  it.each(cases)('refuses %s', async (_label, env, files, expected) => {
    const service = start(env, files);
    expect(await service.exited).toBe(78);
    const lines = service.stderr().trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^switchboard: configuration error: /);
    expect(lines[0]).toMatch(expected);
    expect(service.stdout()).toBe('');
  });

  it('never prints the secret it refuses', async () => {
    const service = start({ SERVICE_JWT_SECRET: 'not-hex-but-long-enough-to-be-a-secret-value' });
    expect(await service.exited).toBe(78);
    expect(service.stderr()).not.toContain('not-hex-but-long-enough');
  });
});

function dotEnvDir(): string {
  const cwd = makeTempDir();
  writeFileSync(path.join(cwd, '.env'), `SERVICE_JWT_SECRET=${TEST_JWT_SECRET}\n`);
  return cwd;
}

describe('a running hub', () => {
  it('serves health, readiness and docs, then drains on SIGTERM and exits 0', async () => {
    const service = start({}, {});
    const url = await readyUrl(service);
    const ready = await service.waitForLog((entry) => entry.msg === 'Switchboard is ready');
    expect(ready).toMatchObject({ storage: expect.stringMatching(/^SQLite /), queue: 'in-process (embedded)', worker: 'embedded' });
    // What a new user needs from the start line (issue 33): where the Web UI is, the model, the channels, what to do next.
    expect(ready).toMatchObject({
      web_ui: expect.stringMatching(new RegExp(`^http://127\\.0\\.0\\.1:${url.split(':').pop()}/`)),
      model: expect.stringMatching(/^builtin \(offline/),
      channels: ['web'],
      next_step: expect.stringMatching(/create the first account/),
    });
    expect((await fetch(`${url}/api/v1/health`)).status).toBe(200);
    expect((await fetch(`${url}/api/v1/health/ready`)).status).toBe(200);
    expect((await fetch(`${url}/api/v1/docs/`)).status).toBe(200);

    service.child.kill('SIGTERM');
    expect(await service.exited).toBe(0);
    expect(service.stdout()).toContain('"msg":"stopped"');
    await expect(fetch(`${url}/api/v1/health`)).rejects.toThrow();
  });

  it('exits 0 on SIGINT too', async () => {
    const service = start();
    await readyUrl(service);
    service.child.kill('SIGINT');
    expect(await service.exited).toBe(0);
  });

  it.each([
    ['has no secret', undefined],
    ['has an empty secret', ''],
  ])('starts from a .env file when the environment %s', async (_label, environmentValue) => {
    const cwd = dotEnvDir();
    const env: Record<string, string> = testEnv(path.join(cwd, 'data'));
    delete env.SERVICE_JWT_SECRET;
    if (environmentValue !== undefined) env.SERVICE_JWT_SECRET = environmentValue;
    const service = spawnService(env, { cwd });
    const url = await readyUrl(service);
    expect((await fetch(`${url}/api/v1/health`)).status).toBe(200);
    service.child.kill('SIGTERM');
    expect(await service.exited).toBe(0);
  });
});
