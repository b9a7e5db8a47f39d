import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { startService, type RunningService } from '../../src/main';
import { ScriptedProvider } from '../fakes/scripted-provider';
import { GENEROUS_RATE_LIMITS } from '../helpers/auth-service';
import { testEnv } from '../helpers/env';
import { jsonBody, request } from '../helpers/http';
import { LogCapture } from '../helpers/log-capture';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir';
import { registerUser, type TestUser } from '../helpers/users';
import { openSocket } from '../helpers/ws-client';

let service: RunningService;
let api: string;
let admin: TestUser;
let user: TestUser;
const provider = new ScriptedProvider();

beforeAll(async () => {
  const cwd = makeTempDir();
  // A small model: the system prompt budget is 600 − 256 = 344 tokens.
  writeFileSync(path.join(cwd, 'config.yaml'), 'llm:\n  context_window: 600\nagent:\n  working_memory_tokens: 256\n');
  service = await startService({ env: testEnv(path.join(cwd, 'data'), GENEROUS_RATE_LIMITS), cwd, logDestination: new LogCapture(), provider });
  api = `http://127.0.0.1:${service.port}/api/v1`;
  admin = await registerUser(api, 'root');
  user = await registerUser(api, 'ann');
});

afterAll(async () => {
  await service.stop();
  removeTempDirs();
});

const as = (who: TestUser) => ({ authorization: `Bearer ${who.token}` });
const send = (who: TestUser, method: string, route: string, body?: unknown) =>
  request(`${api}${route}`, body === undefined ? { method, headers: as(who) } : { ...jsonBody(body, as(who)), method });

const support = {
  name: 'support',
  description: 'Customer support triage',
  system_prompt: 'You triage support requests.',
  tool_list: 'current_time, calculator',
  triggers: { keywords: ['refund', 'broken'], regex: ['\\bticket #\\d+'] },
  binding_channels: ['web', 'slack'],
};

describe('workflows API', () => {
  it('creates (admin only), reads, patches, replaces and deletes', async () => {
    expect((await send(user, 'POST', '/assistant/workflows', support)).status).toBe(403);
    const created = await send(admin, 'POST', '/assistant/workflows', support);
    expect(created.status).toBe(201);
    expect(created.body.data).toEqual({
      id: expect.any(String),
      ...support,
      knowledge_base_ids: [],
      triggers: { keywords: ['refund', 'broken'], regex: ['\\bticket #\\d+'], contact_tags: [] },
      default: false,
      mid_turn: null,
      approvals: [],
      events: { webhooks: [], schedules: [] },
      created_at: expect.any(String),
      updated_at: expect.any(String),
      warnings: [],
    });
    expect((await send(admin, 'POST', '/assistant/workflows', support)).status).toBe(409);
    expect((await send(user, 'GET', '/assistant/workflows/support')).body.data.name).toBe('support');
    const patched = await send(admin, 'PATCH', '/assistant/workflows/support', { description: 'Triage' });
    expect(patched.body.data).toMatchObject({ description: 'Triage', system_prompt: support.system_prompt });
    // Nested triggers merge (decisions.md §8): members sent replace, absent stay, null removes.
    const merged = await send(admin, 'PATCH', '/assistant/workflows/support', { triggers: { contact_tags: ['vip'], min_score: 2 } });
    expect(merged.body.data.triggers).toEqual({ keywords: ['refund', 'broken'], regex: ['\\bticket #\\d+'], contact_tags: ['vip'], min_score: 2 });
    const unset = await send(admin, 'PATCH', '/assistant/workflows/support', { triggers: { regex: null, min_score: null } });
    expect(unset.body.data.triggers).toEqual({ keywords: ['refund', 'broken'], regex: [], contact_tags: ['vip'] });
    const unsafe = await send(admin, 'PATCH', '/assistant/workflows/support', { triggers: { regex: ['(a+)+$'] } });
    expect(unsafe.status).toBe(422);
    const replaced = await send(admin, 'PUT', '/assistant/workflows/support', { ...support, tool_list: '' });
    expect(replaced.body.data).toMatchObject({ tool_list: '', description: 'Customer support triage' });
    const listed = await send(user, 'GET', '/assistant/workflows');
    expect(listed.body.data).toMatchObject({ total: 1, has_more: false });
    expect((await send(admin, 'DELETE', '/assistant/workflows/support')).status).toBe(204);
    const gone = await send(user, 'GET', '/assistant/workflows/support');
    expect([gone.status, gone.body.error.code]).toEqual([404, 'WORKFLOW_NOT_FOUND']);
  });

  it('refuses bad workflows with the field named', async () => {
    const cases: [unknown, number, string, string][] = [
      [{ ...support, name: 'Not A Slug' }, 422, 'VALIDATION_ERROR', 'name'],
      [{ ...support, tool_list: 'calculator, teleport' }, 422, 'VALIDATION_ERROR', 'tool_list'],
      [{ ...support, triggers: { regex: ['(a+)+$'] } }, 422, 'VALIDATION_ERROR', 'triggers.regex.0'],
      [{ ...support, triggers: { regex: ['(x|x)*y'] } }, 422, 'VALIDATION_ERROR', 'triggers.regex.0'],
      [{ ...support, triggers: { regex: ['['] } }, 422, 'VALIDATION_ERROR', 'triggers.regex.0'],
      [{ ...support, knowledge_base_ids: ['handbook'] }, 422, 'VALIDATION_ERROR', 'knowledge_base_ids'],
      [{ ...support, binding_channels: ['irc'] }, 422, 'VALIDATION_ERROR', 'binding_channels.0'],
      [{ ...support, system_prompt: 'word '.repeat(400) }, 422, 'SYSTEM_PROMPT_TOO_LONG', 'system_prompt'],
    ];
    for (const [body, status, code, field] of cases) {
      const response = await send(admin, 'POST', '/assistant/workflows', body);
      expect({ field, status: response.status, code: response.body.error.code, fields: Object.keys(response.body.error.details.fields) }).toEqual({
        field,
        status,
        code,
        fields: [field],
      });
    }
    const tooLong = await send(admin, 'POST', '/assistant/workflows', cases.at(-1)![0]);
    expect(tooLong.body.error.details).toMatchObject({ tokens: 401, limit: 344 });
  });

  it('syncs: created, updated with the changed fields, unchanged, refused, pruned; dry runs write nothing; idempotent', async () => {
    const a = { ...support, name: 'alpha' };
    const b = { ...support, name: 'beta' };
    const dry = await send(admin, 'POST', '/assistant/workflows/sync', { workflows: [a, b], dry_run: true });
    expect(dry.body.data).toEqual({ created: ['alpha', 'beta'], updated: [], unchanged: [], deleted: [], errors: [], dry_run: true, warnings: [] });
    expect((await send(admin, 'GET', '/assistant/workflows/alpha')).status).toBe(404);
    await send(admin, 'POST', '/assistant/workflows/sync', { workflows: [a, b] });
    const again = await send(admin, 'POST', '/assistant/workflows/sync', { workflows: [a, b] });
    expect(again.body.data).toMatchObject({ created: [], updated: [], unchanged: ['alpha', 'beta'], deleted: [] });

    const changed = { ...a, system_prompt: 'New prompt.', triggers: { ...a.triggers, keywords: ['refund'] } };
    const bad = { ...support, name: 'gamma', tool_list: 'teleport' };
    const result = await send(admin, 'POST', '/assistant/workflows/sync', { workflows: [changed, bad, { name: 'Bad Name' }], prune: true });
    expect(result.body.data).toEqual({
      created: [],
      updated: [{ name: 'alpha', fields: ['system_prompt', 'triggers'] }],
      unchanged: [],
      deleted: ['beta'],
      errors: [
        {
          name: 'gamma',
          index: 1,
          code: 'VALIDATION_ERROR',
          message: expect.any(String),
          fields: { tool_list: [expect.objectContaining({ code: 'unknown_tool' })] },
        },
        { name: 'Bad Name', index: 2, code: 'VALIDATION_ERROR', message: expect.any(String), fields: { name: expect.any(Array) } },
      ],
      dry_run: false,
      warnings: [],
    });
    expect((await send(admin, 'GET', '/assistant/workflows/beta')).status).toBe(404);
    expect((await send(admin, 'GET', '/assistant/workflows/alpha')).body.data.system_prompt).toBe('New prompt.');
    const twice = await send(admin, 'POST', '/assistant/workflows/sync', { workflows: [a, a] });
    expect(twice.body.data.errors).toEqual([expect.objectContaining({ index: 1, code: 'CONFLICT' })]);
  });

  it('edits the same bindings through binding-channels and the workflow field', async () => {
    await send(admin, 'POST', '/assistant/workflows/sync', {
      workflows: [
        { ...support, name: 'one', binding_channels: ['web'] },
        { ...support, name: 'two', binding_channels: [] },
      ],
    });
    const put = await send(admin, 'PUT', '/assistant/binding-channels/slack:C123', { workflows: ['one', 'two'] });
    expect(put.body.error).toBeNull();
    expect(put.body.data).toEqual({ channel: 'slack:C123', workflows: ['one', 'two'] });
    expect((await send(user, 'GET', '/assistant/workflows/two')).body.data.binding_channels).toEqual(['slack:C123']);
    const all = await send(user, 'GET', '/assistant/binding-channels');
    expect(all.body.data).toEqual(
      expect.arrayContaining([
        { channel: 'slack:C123', workflows: ['one', 'two'] },
        { channel: 'telegram', workflows: [] },
      ]),
    );
    await send(admin, 'PUT', '/assistant/binding-channels/slack:C123', { workflows: ['two'] });
    expect((await send(user, 'GET', '/assistant/workflows/one')).body.data.binding_channels).toEqual(['web']);
    expect((await send(admin, 'PUT', '/assistant/binding-channels/slack:C123', { workflows: ['nope'] })).status).toBe(422);
    expect((await send(admin, 'PUT', '/assistant/binding-channels/irc', { workflows: [] })).status).toBe(422);
  });

  it('keeps contacts with tags and a bound workflow (admin only)', async () => {
    await send(admin, 'POST', '/assistant/workflows/sync', { workflows: [{ ...support, name: 'vip-desk' }] });
    const put = await send(admin, 'PUT', '/assistant/contacts/telegram::42', { display_name: 'Eve', tags: ['vip'], workflow: 'vip-desk' });
    expect(put.body.data).toMatchObject({ session_key: 'telegram::42', display_name: 'Eve', tags: ['vip'], workflow: 'vip-desk' });
    const list = await send(admin, 'GET', '/assistant/contacts');
    expect(list.body.data.items).toEqual([expect.objectContaining({ session_key: 'telegram::42' })]);
    expect((await send(user, 'GET', '/assistant/contacts')).status).toBe(403);
    expect((await send(admin, 'PUT', '/assistant/contacts/telegram::42', { workflow: 'missing' })).status).toBe(404);
  });
});

describe('routing in turns', () => {
  it('applies the chosen workflow (prompt, pinned tools), keeps it sticky, honours metadata.workflow, refuses unknown names', async () => {
    await send(admin, 'POST', '/assistant/workflows/sync', {
      workflows: [
        {
          name: 'oncall',
          system_prompt: 'You help the on-call engineer.',
          tool_list: 'current_time',
          triggers: { keywords: ['outage', 'pager'] },
          binding_channels: ['web'],
        },
        {
          name: 'sales',
          system_prompt: 'You answer pricing questions.',
          tool_list: 'calculator',
          triggers: { keywords: ['pricing'] },
          binding_channels: ['web'],
        },
      ],
    });
    const sessionId = (await send(user, 'POST', '/sessions', {})).body.data.id;
    const socket = await openSocket(`ws://127.0.0.1:${service.port}/ws/v1/sessions/${sessionId}`, { headers: as(user) });
    const turn = async (text: string, metadata?: Record<string, unknown>) => {
      const before = socket.frames.at(-1)?.seq ?? 0;
      const sent = await send(user, 'POST', `/sessions/${sessionId}/messages`, { text, ...(metadata ? { metadata } : {}) });
      expect(sent.status).toBe(202);
      await socket.nextOfType('done', before);
      return provider.requests.at(-1)!;
    };
    const first = await turn('the pager went off: outage in eu-west');
    expect(first.messages[0]!.content).toMatch(/^You help the on-call engineer\./);
    expect(first.tools!.map((tool) => tool.name)).toEqual(['current_time']);
    expect((await send(user, 'GET', `/sessions/${sessionId}`)).body.data.active_workflow_id).toBe(
      (await send(user, 'GET', '/assistant/workflows/oncall')).body.data.id,
    );

    const sticky = await turn('thanks, what next?'); // no trigger matches: the session keeps its workflow
    expect(sticky.messages[0]!.content).toMatch(/^You help the on-call engineer\./);
    const switched = await turn('what is the pricing for 10 seats?');
    expect(switched.messages[0]!.content).toMatch(/^You answer pricing questions\./);
    const explicit = await turn('back to the outage please', { workflow: 'sales' });
    expect(explicit.messages[0]!.content).toMatch(/^You answer pricing questions\./);

    const unknown = await send(user, 'POST', `/sessions/${sessionId}/messages`, { text: 'x', metadata: { workflow: 'nope' } });
    expect([unknown.status, Object.keys(unknown.body.error.details.fields)]).toEqual([422, ['metadata.workflow']]);
    const history = await send(user, 'GET', `/sessions/${sessionId}/messages?limit=100`);
    expect(new Set(history.body.data.items.map((m: any) => m.workflow_id)).size).toBe(2);

    const tools = await send(user, 'PATCH', `/sessions/${sessionId}/tools`, { load: ['calculator'] });
    expect([tools.status, tools.body.error.code]).toEqual([409, 'CONFLICT']);
    socket.close();
  });
});
