import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createWebAdapter, WEB_ADAPTER_DEFAULTS } from '../../../adapters/web';
import type { Hub } from '../../../src/core/hub';
import { createLogger } from '../../../src/logs/logger';
import { startService } from '../../../src/main';
import { attachUpgradeRouter } from '../../../src/server/upgrade-router';
import { ScriptedProvider } from '../../fakes/scripted-provider';
import { GENEROUS_RATE_LIMITS } from '../../helpers/auth-service';
import { testEnv } from '../../helpers/env';
import { jsonBody, request } from '../../helpers/http';
import { LogCapture } from '../../helpers/log-capture';
import { makeTempDir, removeTempDirs } from '../../helpers/temp-dir';
import { registerUser } from '../../helpers/users';
import { openSocket } from '../../helpers/ws-client';

afterAll(removeTempDirs);

/**
 * A client may send its first frame the moment the socket opens, while the server still awaits
 * round trips (takeover on the control bus, subscribing). Those frames must not be lost: with Redis
 * under load they were, and the turn never started.
 */
it('handles frames the client sends before the connection finished opening', async () => {
  const service = await startService({
    env: testEnv(makeTempDir(), GENEROUS_RATE_LIMITS),
    cwd: makeTempDir(),
    logDestination: new LogCapture(),
    provider: new ScriptedProvider(),
  });
  const real = service.hub!;
  // The same hub, but its control bus takes 300 ms per publish (a slow Redis).
  const slow: Hub = Object.create(real, {
    control: {
      value: {
        name: real.control.name,
        publish: async (message: Parameters<Hub['control']['publish']>[0]) => {
          await new Promise((resolve) => setTimeout(resolve, 300));
          return real.control.publish(message);
        },
        subscribe: (listener: Parameters<Hub['control']['subscribe']>[0]) => real.control.subscribe(listener),
        close: async () => undefined,
      },
    },
  });
  const adapter = createWebAdapter({
    logger: createLogger({ level: 'silent', format: 'json', name: 'test' }),
    allowedOrigins: new Set(),
    idleTimeoutMs: 90_000,
    maxPayloadBytes: WEB_ADAPTER_DEFAULTS.maxPayloadBytes,
    maxBufferedBytes: WEB_ADAPTER_DEFAULTS.maxBufferedBytes,
    socketAuth: service.socketAuth!,
    draining: () => false,
  });
  await adapter.start(slow);
  const server = createServer();
  attachUpgradeRouter(server, [{ matches: (p) => adapter.matches(p), handle: (r, s, h) => adapter.handleUpgrade(r, s, h) }]);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const api = `http://127.0.0.1:${service.port}/api/v1`;
    const { token } = await registerUser(api, 'root');
    const sessionId = (await request(`${api}/sessions`, jsonBody({}, { authorization: `Bearer ${token}` }))).body.data.id;
    const socket = await openSocket(`ws://127.0.0.1:${(server.address() as AddressInfo).port}/ws/v1/sessions/${sessionId}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    socket.send({ type: 'ping', payload: {} }); // at once: the server is still in its 300 ms publish
    socket.send({ type: 'user_message', payload: { text: 'hello', mode: 'normal' } });
    expect((await socket.nextOfType('pong')).payload).toEqual({});
    expect((await socket.nextOfType('done')).payload.text).toBe('Hello there, friend.');
    // And in order: the on-connect state first, then the answers to the early frames.
    expect(socket.frames.map((frame) => frame.type).slice(0, 2)).toEqual(['agent_state', 'pong']);
    socket.close();
  } finally {
    await adapter.stop();
    server.close();
    await service.stop();
  }
});
