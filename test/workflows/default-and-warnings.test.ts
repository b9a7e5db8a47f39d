import path from 'node:path';
import { startService, type RunningService } from '../../src/main';
import { renderWorkflowYaml } from '../../src/workflows/yaml';
import { GENEROUS_RATE_LIMITS } from '../helpers/auth-service';
import { testEnv } from '../helpers/env';
import { jsonBody, request } from '../helpers/http';
import { LogCapture } from '../helpers/log-capture';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir';
import { registerUser, type TestUser } from '../helpers/users';

/**
 * Routing you can trust (issue 33): a channel's fallback workflow (`default: true`), `warnings` for a
 * workflow that can never be picked (create, update and sync answers), and the routing reason kept
 * with the reply (history after the fact, not only the live `done`). The hub runs the built-in model.
 */
let service: RunningService;
let api: string;
let admin: TestUser;

beforeAll(async () => {
  const cwd = makeTempDir();
  service = await startService({ env: testEnv(path.join(cwd, 'data'), GENEROUS_RATE_LIMITS), cwd, logDestination: new LogCapture() });
  api = `http://127.0.0.1:${service.port}/api/v1`;
  admin = await registerUser(api, 'root');
});

afterAll(async () => {
  await service.stop();
  removeTempDirs();
});

const auth = () => ({ authorization: `Bearer ${admin.token}` });
const send = (method: string, route: string, body?: unknown) =>
  request(`${api}${route}`, body === undefined ? { method, headers: auth() } : { ...jsonBody(body, auth()), method });
const workflow = (name: string, extra: Record<string, unknown> = {}) => ({ name, system_prompt: `You are ${name}.`, binding_channels: ['web'], ...extra });

async function ask(text: string): Promise<{ done: any; history: any[] }> {
  const session = (await send('POST', '/sessions', {})).body.data.id as string;
  const done = (await send('POST', `/sessions/${session}/messages?sync=true`, { text })).body.data;
  const history = (await send('GET', `/sessions/${session}/messages`)).body.data.items;
  return { done, history };
}

describe('warnings in the answers of writes', () => {
  afterEach(async () => {
    await send('POST', '/assistant/workflows/sync', { workflows: [], prune: true });
  });

  it('says a workflow with no triggers can never be picked, and stops saying it once it can', async () => {
    const created = await send('POST', '/assistant/workflows', workflow('lonely'));
    expect(created.status).toBe(201);
    expect(created.body.data.default).toBe(false);
    expect(created.body.data.warnings).toEqual([{ workflow: 'lonely', code: 'never_matches', message: expect.stringMatching(/never picks it/) }]);
    // Listed like any other, without warnings (they belong to the write's answer).
    expect((await send('GET', '/assistant/workflows/lonely')).body.data).not.toHaveProperty('warnings');

    const patched = await send('PATCH', '/assistant/workflows/lonely', { triggers: { keywords: ['alone'] } });
    expect(patched.body.data.warnings).toEqual([]);
    const unbound = await send('PATCH', '/assistant/workflows/lonely', { binding_channels: [] });
    expect(unbound.body.data.warnings.map((warning: any) => warning.code)).toEqual(['not_bound']);
    const unreachable = await send('PUT', '/assistant/workflows/lonely', workflow('lonely', { triggers: { keywords: ['alone'], min_score: 3 } }));
    expect(unreachable.body.data.warnings).toEqual([
      { workflow: 'lonely', code: 'min_score_unreachable', message: 'min_score 3 is more than all its triggers together can score (1): it never matches.' },
    ]);
    const fallback = await send('PATCH', '/assistant/workflows/lonely', { default: true, triggers: { keywords: null, min_score: null } });
    expect(fallback.body.data).toMatchObject({ default: true, warnings: [] });
  });

  it('lists warnings in a sync answer (dry runs too), and a second default of a channel', async () => {
    const body = {
      workflows: [workflow('first', { default: true }), workflow('second', { default: true }), workflow('nowhere', { binding_channels: [], default: true })],
    };
    const dry = await send('POST', '/assistant/workflows/sync', { ...body, dry_run: true });
    expect(dry.body.data.created).toEqual(['first', 'second', 'nowhere']);
    const codes = (result: any) => result.warnings.map((warning: any) => `${warning.workflow}:${warning.code}`);
    expect(codes(dry.body.data)).toEqual(['first:second_default', 'second:second_default', 'nowhere:default_not_bound']);
    expect(dry.body.data.warnings[0].message).toBe('"second" is the default of web too; only one answers there ("first", the alphabetically first).');
    const applied = await send('POST', '/assistant/workflows/sync', body);
    expect(codes(applied.body.data)).toEqual(codes(dry.body.data));
    // Unchanged the second time, still warned about: the problem is still there.
    expect(codes((await send('POST', '/assistant/workflows/sync', body)).body.data)).toEqual(codes(dry.body.data));
  });
});

describe('the default workflow of a channel', () => {
  beforeAll(async () => {
    const synced = await send('POST', '/assistant/workflows/sync', {
      workflows: [
        workflow('billing', { triggers: { keywords: ['invoice'] } }),
        workflow('concierge', { default: true }),
        workflow('slack-only', { default: true, binding_channels: ['slack'] }),
      ],
      prune: true,
    });
    expect(synced.body.data.errors).toEqual([]);
  });

  it('answers what no trigger matches, on the channels it is bound to; a trigger still wins', async () => {
    const fallback = await ask('hello there');
    expect(fallback.done).toMatchObject({ workflow: 'concierge', routing_reason: 'channel_default' });
    const matched = await ask('where is my invoice');
    expect(matched.done).toMatchObject({ workflow: 'billing', routing_reason: 'trigger' });
  });

  it('keeps the routing reason with the reply: the history says which workflow answered and why', async () => {
    const { done, history } = await ask('hello again');
    const reply = history.find((message: any) => message.id === done.message_id);
    expect(reply).toMatchObject({ role: 'assistant', workflow: 'concierge', routing_reason: 'channel_default' });
    const question = history.find((message: any) => message.role === 'user');
    expect(question).toMatchObject({ workflow: null, routing_reason: null });
    const one = await send('GET', `/sessions/${reply.session_id}/messages/${reply.id}`);
    if (one.status === 200) expect(one.body.data).toMatchObject({ workflow: 'concierge', routing_reason: 'channel_default' });
  });

  it('is named by the routing test box', async () => {
    const result = await send('POST', '/assistant/routing/test', { text: 'good morning', channel: 'web' });
    expect(result.body.data).toMatchObject({ workflow: 'concierge', reason: 'channel_default', rule: expect.stringContaining('default: true') });
    const slack = await send('POST', '/assistant/routing/test', { text: 'good morning', channel: 'slack:C42' });
    expect(slack.body.data).toMatchObject({ workflow: 'slack-only', reason: 'channel_default' });
  });

  it('is written in exported YAML only when true', async () => {
    const concierge = (await send('GET', '/assistant/workflows/concierge')).body.data;
    expect(renderWorkflowYaml(concierge)).toContain('\ndefault: true\n');
    expect(renderWorkflowYaml((await send('GET', '/assistant/workflows/billing')).body.data)).not.toContain('default:');
  });
});
