import path from 'node:path';
import { Redis } from 'ioredis';
import { startService } from '../../src/main';
import { ScriptedProvider } from '../fakes/scripted-provider';
import { GENEROUS_RATE_LIMITS } from '../helpers/auth-service';
import { testEnv } from '../helpers/env';
import { jsonBody, request } from '../helpers/http';
import { LogCapture } from '../helpers/log-capture';
import { startOwnRedis } from '../helpers/redis-server';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir';
import { registerUser } from '../helpers/users';

afterAll(removeTempDirs);

it('runs turns on the Redis that SERVICE_REDIS_URL names (not a default localhost:6379), password included', async () => {
  const redis = await startOwnRedis({ password: 'p4ss-word' });
  const url = `redis://:p4ss-word@127.0.0.1:${redis.port}`;
  const logs = new LogCapture();
  const cwd = makeTempDir();
  const service = await startService({
    env: testEnv(path.join(cwd, 'data'), { ...GENEROUS_RATE_LIMITS, SERVICE_REDIS_URL: url }),
    cwd,
    logDestination: logs,
    provider: new ScriptedProvider(),
  });
  try {
    const api = `http://127.0.0.1:${service.port}/api/v1`;
    const { token } = await registerUser(api, 'root');
    const auth = { authorization: `Bearer ${token}` };
    const sessionId = (await request(`${api}/sessions`, jsonBody({}, auth))).body.data.id;
    const done = await request(`${api}/sessions/${sessionId}/messages?sync=true`, jsonBody({ text: 'hello' }, auth));
    expect(done.status).toBe(200);
    expect(done.body.data.text).toBe('Hello there, friend.');
    expect(logs.text).toContain(`BullMQ on Redis redis://:***@127.0.0.1:${redis.port}`);
    expect(logs.text).not.toContain('p4ss-word');
    // The queue itself lives there too, not on a default localhost:6379.
    const own = new Redis(url);
    try {
      expect((await own.keys('switchboard:bull:turns:*')).length).toBeGreaterThan(0);
    } finally {
      own.disconnect();
    }
  } finally {
    await service.stop();
    await redis.kill();
  }
});
