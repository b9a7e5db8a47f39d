import path from 'node:path';
import { startService, type RunningService } from '../../src/main';
import { Router } from '../../src/routing/router';
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
  const create = (body: unknown) => request(`${api}/assistant/workflows`, { ...jsonBody(body, { authorization: `Bearer ${admin.token}` }), method: 'POST' });
  for (const workflow of [
    { name: 'billing', triggers: { keywords: ['invoice', 'refund'], regex: ['\\binv-\\d{4,}\\b'] }, binding_channels: ['web'] },
    { name: 'deploy', triggers: { keywords: ['deploy', 'rollback'] }, binding_channels: ['web', 'slack'] },
    { name: 'ops', triggers: { keywords: ['outage'] }, binding_channels: ['slack:C-OPS'] },
    { name: 'vip', triggers: { contact_tags: ['vip', 'enterprise'], min_score: 2 }, binding_channels: ['web'] },
  ]) {
    expect((await create(workflow)).status).toBe(201);
  }
});

afterAll(async () => {
  await service.stop();
  removeTempDirs();
});

const routeTest = (body: unknown, who: TestUser | null = user) =>
  request(`${api}/assistant/routing/test`, { ...jsonBody(body, who ? { authorization: `Bearer ${who.token}` } : {}), method: 'POST' });

describe('POST /assistant/routing/test', () => {
  it('names the winner, its score, the rule, and every workflow’s score with what matched', async () => {
    const response = await routeTest({ text: 'Refund for INV-20931, and deploy the fix', channel: 'web' });
    expect(response.status).toBe(200);
    const result = response.body.data;
    expect(result).toMatchObject({ workflow: 'billing', reason: 'trigger', score: 3, channel: 'web' });
    expect(result.rule).toBe('"billing" has the highest trigger score (3) among the workflows bound to web.');
    expect(result.workflows.map((entry: { name: string }) => entry.name)).toEqual(['billing', 'deploy', 'ops', 'vip']);
    expect(result.workflows[0]).toEqual({
      name: 'billing',
      bound: true,
      score: 3,
      min_score: 1,
      matches: true,
      matched: { keywords: ['refund'], regex: ['\\binv-\\d{4,}\\b'], contact_tags: [] },
    });
    expect(result.workflows[1]).toMatchObject({ name: 'deploy', bound: true, score: 1, matches: true, matched: { keywords: ['deploy'] } });
    expect(result.workflows[3]).toMatchObject({ name: 'vip', bound: true, score: 0, min_score: 2, matches: false });
  });

  it('scores workflows that are not bound to the channel but marks them out of the running', async () => {
    const onWeb = (await routeTest({ text: 'outage in eu-west', channel: 'web' })).body.data;
    expect(onWeb).toMatchObject({ workflow: null, reason: 'default', score: null });
    expect(onWeb.rule).toMatch(/^None of the 3 workflows bound to web reached its min_score/);
    expect(onWeb.workflows.find((entry: { name: string }) => entry.name === 'ops')).toMatchObject({ bound: false, score: 1, matches: false });
    const onOps = (await routeTest({ text: 'outage in eu-west', channel: 'slack:C-OPS' })).body.data;
    expect(onOps).toMatchObject({ workflow: 'ops', reason: 'trigger', score: 1 });
    expect((await routeTest({ text: 'hello', channel: 'telegram' })).body.data.rule).toMatch(/^No workflow is bound to telegram:/);
  });

  it('honours metadata.workflow, contact tags and min_score, and says when a requested workflow does not exist', async () => {
    expect((await routeTest({ text: 'refund please', channel: 'web', workflow: 'deploy' })).body.data).toMatchObject({
      workflow: 'deploy',
      reason: 'metadata',
      score: null,
    });
    const missing = (await routeTest({ text: 'refund please', channel: 'web', workflow: 'nope' })).body.data;
    expect(missing).toMatchObject({ workflow: 'billing', reason: 'trigger' });
    expect(missing.rule).toContain('metadata.workflow "nope" names no workflow');
    expect((await routeTest({ text: 'hi', channel: 'web', contact_tags: ['vip'] })).body.data.reason).toBe('default');
    expect((await routeTest({ text: 'hi', channel: 'web', contact_tags: ['vip', 'enterprise'] })).body.data).toMatchObject({ workflow: 'vip', score: 2 });
  });

  it('says which rule decided ties', async () => {
    const result = (await routeTest({ text: 'deploy the refund fix', channel: 'web' })).body.data;
    expect(result).toMatchObject({ workflow: 'billing', score: 1 });
    expect(result.rule).toContain('the tie goes to the alphabetically first name');
  });

  it('refuses bad input with 422 naming the field, and anonymous callers with 401', async () => {
    const bad = await routeTest({ text: '', channel: 'irc' });
    expect(bad.status).toBe(422);
    expect(Object.keys(bad.body.error.details.fields).sort()).toEqual(['channel', 'text']);
    expect((await routeTest({ text: 'hi', channel: 'web', extra: 1 })).status).toBe(422);
    expect((await routeTest({ text: 'hi', channel: 'web' }, null)).status).toBe(401);
  });

  it('is described in the OpenAPI document', async () => {
    const document = (await request(`${api}/openapi.json`)).body;
    expect(document.paths['/api/v1/assistant/routing/test'].post.responses['200']).toBeDefined();
  });

  // The box once ran on a router of its own that was never told of workflow changes: it kept
  // answering from the workflows of its first use (issue 27). It must use the hub's running router.
  it('routes to a workflow created after the box was first used', async () => {
    const create = (body: unknown) => request(`${api}/assistant/workflows`, { ...jsonBody(body, { authorization: `Bearer ${admin.token}` }), method: 'POST' });
    expect((await create({ name: 'zebra', triggers: { keywords: ['zebra'] }, binding_channels: ['web'] })).status).toBe(201);
    expect((await routeTest({ text: 'a zebra', channel: 'web' })).body.data).toMatchObject({ workflow: 'zebra', reason: 'trigger' });
    expect((await create({ name: 'giraffe', triggers: { keywords: ['giraffe'] }, binding_channels: ['web'] })).status).toBe(201);
    const result = (await routeTest({ text: 'a giraffe', channel: 'web' })).body.data;
    expect(result).toMatchObject({ workflow: 'giraffe', reason: 'trigger', score: 1 });
    expect(result.workflows.map((entry: { name: string }) => entry.name)).toEqual(expect.arrayContaining(['zebra', 'giraffe']));
  });
});

describe('Router.explain', () => {
  it('decides exactly as route() does', () => {
    const rows = [
      { id: 'a', name: 'alpha', binding_channels: ['web'], triggers: { keywords: ['release train'], regex: [], contact_tags: [] } },
      { id: 'b', name: 'beta', binding_channels: ['web'], triggers: { keywords: ['train'], regex: ['tr[a]in'], contact_tags: [] } },
    ] as never[];
    const router = new Router(rows);
    for (const text of ['the release train', 'train', 'nothing here', 'release']) {
      const input = { text, channel: 'web' };
      const { decision, scores } = router.explain(input);
      expect(decision).toEqual(router.route(input));
      const best = Math.max(...scores.filter((entry) => entry.matches).map((entry) => entry.score), 0);
      expect(decision.score ?? 0).toBe(best);
    }
  });
});
