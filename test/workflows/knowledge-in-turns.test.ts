import { startService, type RunningService } from '../../src/main';
import { GENEROUS_RATE_LIMITS } from '../helpers/auth-service';
import { testEnv } from '../helpers/env';
import { jsonBody, request } from '../helpers/http';
import { LogCapture } from '../helpers/log-capture';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir';
import { registerUser, type TestUser } from '../helpers/users';

/** The whole path with the default (builtin) model: workflow → its collections → passages → answer. */
let service: RunningService;
let api: string;
let admin: TestUser;

beforeAll(async () => {
  service = await startService({ env: testEnv(makeTempDir(), GENEROUS_RATE_LIMITS), cwd: makeTempDir(), logDestination: new LogCapture() });
  api = `http://127.0.0.1:${service.port}/api/v1`;
  admin = await registerUser(api, 'root');
});

afterAll(async () => {
  await service.stop();
  removeTempDirs();
});

const post = (route: string, body: unknown) => request(`${api}${route}`, jsonBody(body, { authorization: `Bearer ${admin.token}` }));

it("answers from the workflow's collections only, naming the source", async () => {
  await post('/knowledge/collections', { name: 'runbooks' });
  await post('/knowledge/collections', { name: 'secrets' });
  await post('/knowledge/collections/runbooks/documents', {
    title: 'Database failover',
    text: 'To fail over the primary database, promote the replica with pgctl promote, then repoint the service DNS record.',
  });
  await post('/knowledge/collections/secrets/documents', {
    title: 'Unlisted notes',
    text: 'The primary database failover password is swordfish; promote the replica only after paging the DBA.',
  });
  const workflow = await post('/assistant/workflows', {
    name: 'oncall',
    system_prompt: 'You help the on-call engineer.',
    knowledge_base_ids: ['runbooks'],
    triggers: { keywords: ['failover'] },
    binding_channels: ['web'],
  });
  expect(workflow.status).toBe(201);
  expect((await post('/assistant/workflows', { name: 'leaky', knowledge_base_ids: ['no-such-collection'] })).status).toBe(422);

  const sessionId = (await post('/sessions', {})).body.data.id;
  const done = await post(`/sessions/${sessionId}/messages?sync=true`, { text: 'How do I do a database failover?' });
  expect(done.status).toBe(200);
  expect(done.body.data.text).toContain('Database failover');
  expect(done.body.data.text).toContain('promote the replica with pgctl promote');
  expect(done.body.data.text).not.toContain('swordfish');
  expect(done.body.data.text).not.toContain('Unlisted notes');
});
