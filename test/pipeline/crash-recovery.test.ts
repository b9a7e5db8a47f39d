import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { GENEROUS_RATE_LIMITS } from '../helpers/auth-service';
import { testEnv } from '../helpers/env';
import { jsonBody, request } from '../helpers/http';
import { readyUrl, spawnService, type ServiceProcess } from '../helpers/process';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir';
import { registerUser } from '../helpers/users';
import { openSocket } from '../helpers/ws-client';

/**
 * The embedded hub (SQLite, in-process queue) killed with SIGKILL mid-turn: the accepted message is
 * in the database, so the restarted hub queues the turn again and finishes it.
 */
const processes: ServiceProcess[] = [];

afterAll(async () => {
  for (const child of processes) if (child.child.exitCode === null) child.child.kill('SIGKILL');
  await Promise.all(processes.map((child) => child.exited));
  removeTempDirs();
});

it('an accepted message survives a SIGKILL of the embedded hub mid-turn', async () => {
  const cwd = makeTempDir();
  writeFileSync(path.join(cwd, 'config.yaml'), 'llm:\n  builtin_token_delay_ms: 40\n');
  const env = testEnv(path.join(cwd, 'data'), { ...GENEROUS_RATE_LIMITS, SERVICE_PORT: '0' });
  const first = spawnService(env, { cwd });
  processes.push(first);
  const url = await readyUrl(first);
  const { token } = await registerUser(`${url}/api/v1`, 'root');
  const auth = { authorization: `Bearer ${token}` };
  const sessionId = (await request(`${url}/api/v1/sessions`, jsonBody({}, auth))).body.data.id;
  const socket = await openSocket(`${url.replace('http', 'ws')}/ws/v1/sessions/${sessionId}`, { headers: auth });
  const accepted = await request(`${url}/api/v1/sessions/${sessionId}/messages`, jsonBody({ text: 'do not lose me' }, auth));
  expect(accepted.status).toBe(202);
  await socket.nextOfType('token', -Infinity, 20_000);
  first.child.kill('SIGKILL');
  expect(await first.exited).toBe('SIGKILL');

  const second = spawnService(env, { cwd });
  processes.push(second);
  const again = await readyUrl(second);
  await second.waitForLog((entry) => entry.msg === 'queued unfinished turns again' && entry.turns === 1);
  // A fresh page: everything the new process has kept for the session, which includes the rerun turn.
  const replay = await openSocket(`${again.replace('http', 'ws')}/ws/v1/sessions/${sessionId}?last_seq=-1`, { headers: auth });
  const done = await replay.nextOfType('done', -Infinity, 30_000);
  expect(done.payload.text).toContain('"do not lose me"');
  const history = await request(`${again}/api/v1/sessions/${sessionId}/messages`, { headers: auth });
  expect(history.body.data.items.map((message: any) => [message.role, message.id === accepted.body.data.id || message.id === done.payload.message_id])).toEqual(
    [
      ['user', true],
      ['assistant', true],
    ],
  );
  replay.close();
  second.child.kill('SIGTERM');
  expect(await second.exited).toBe(0);
}, 60_000);
