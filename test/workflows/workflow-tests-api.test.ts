import path from 'node:path';
import { startService, type RunningService } from '../../src/main';
import { ScriptedProvider } from '../fakes/scripted-provider';
import { GENEROUS_RATE_LIMITS } from '../helpers/auth-service';
import { testEnv } from '../helpers/env';
import { jsonBody, request } from '../helpers/http';
import { LogCapture } from '../helpers/log-capture';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir';
import { registerUser, type TestUser } from '../helpers/users';

let service: RunningService;
let api: string;
let admin: TestUser;
let user: TestUser;

const billing = { name: 'billing', tool_list: 'calculator', triggers: { keywords: ['invoice', 'refund'] }, binding_channels: ['web'] };
const deploy = { name: 'deploy', triggers: { keywords: ['deploy', 'rollback'] }, binding_channels: ['web'] };

beforeAll(async () => {
  const cwd = makeTempDir();
  service = await startService({
    env: testEnv(path.join(cwd, 'data'), GENEROUS_RATE_LIMITS),
    cwd,
    logDestination: new LogCapture(),
    provider: new ScriptedProvider(),
  });
  api = `http://127.0.0.1:${service.port}/api/v1`;
  admin = await registerUser(api, 'root');
  user = await registerUser(api, 'ann');
  for (const workflow of [billing, deploy]) {
    const created = await request(`${api}/assistant/workflows`, jsonBody(workflow, { authorization: `Bearer ${admin.token}` }));
    expect(created.status).toBe(201);
  }
});

afterAll(async () => {
  await service.stop();
  removeTempDirs();
});

const runTests = (body: unknown, token = admin.token) => request(`${api}/assistant/workflows/tests`, jsonBody(body, { authorization: `Bearer ${token}` }));

const CASES = `
- name: an invoice goes to billing
  message: where is my invoice?
  expect: {workflow: billing, reason: trigger}
- name: billing adds up
  message: refund 2 + 2
  model: [{tool: calculator, input: {expression: "2 + 2"}}, {say: "That is 4."}]
  expect: {workflow: billing, tools: [calculator], reply_contains: ["4"]}
`;

describe('POST /assistant/workflows/tests (the editor’s Tests panel)', () => {
  it('runs the cases against the stored workflows: pass per case with the routing reason', async () => {
    const response = await runTests({ workflow: billing, replaces: 'billing', cases: CASES });
    expect(response.status).toBe(200);
    expect(response.body.data).toMatchObject({ passed: 2, failed: 0 });
    expect(response.body.data.cases[0]).toMatchObject({
      name: 'an invoice goes to billing',
      passed: true,
      routing: { workflow: 'billing', reason: 'trigger' },
    });
    expect(response.body.data.cases[1].turn).toMatchObject({ ending: 'done', tools: [{ name: 'calculator', error: null }], reply: 'That is 4.' });
  });

  it('runs them on the unsaved draft: a keyword the draft takes away fails, and nothing is saved', async () => {
    const draft = { ...billing, triggers: { keywords: ['refund'] } };
    const response = await runTests({ workflow: draft, replaces: 'billing', cases: CASES });
    expect(response.body.data).toMatchObject({ passed: 1, failed: 1 });
    expect(response.body.data.cases[0].failures[0]).toMatch(/^routed to the default \(default\), expected "billing"/);
    const stored = await request(`${api}/assistant/workflows/billing`, { headers: { authorization: `Bearer ${admin.token}` } });
    expect(stored.body.data.triggers.keywords).toEqual(['invoice', 'refund']);
  });

  it('a draft that takes another workflow’s keyword shows where the message went', async () => {
    const draft = { ...deploy, triggers: { keywords: ['deploy', 'invoice'] } };
    const response = await runTests({ workflow: draft, replaces: 'deploy', cases: CASES });
    expect(response.body.data.cases[0]).toMatchObject({ passed: true, routing: { workflow: 'billing' } });
    expect(response.body.data.cases[0].failures).toEqual([]);
    // The tie goes to the alphabetically first name: billing still wins; with a second keyword the draft takes it.
    const stronger = { ...deploy, triggers: { keywords: ['invoice', 'where'] } };
    const taken = await runTests({ workflow: stronger, replaces: 'deploy', cases: CASES });
    expect(taken.body.data.cases[0]).toMatchObject({ passed: false, routing: { workflow: 'deploy', reason: 'trigger' } });
  });

  it('refuses invalid cases (422 naming case and field), an invalid draft (422), and non-admins (403)', async () => {
    const bad = await runTests({ workflow: billing, replaces: 'billing', cases: '- {name: x, message: m, expect: {workflow: billing, tool: [a]}}' });
    expect(bad.status).toBe(422);
    expect(bad.body.error.details.fields.cases[0].message).toBe('tests/billing.yaml: case 1 "x": expect: unknown field "tool"');
    const draft = await runTests({ workflow: { ...billing, tool_list: 'no_such_tool' }, replaces: 'billing', cases: CASES });
    expect(draft.status).toBe(422);
    expect(draft.body.error.message).toContain('the edited workflow');
    expect((await runTests({ workflow: billing, cases: CASES }, user.token)).status).toBe(403);
  });
});
