import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { startService, type RunningService } from '../../src/main';
import { ScriptedProvider } from '../fakes/scripted-provider';
import { TestTools } from '../fakes/test-tools';
import { GENEROUS_RATE_LIMITS } from '../helpers/auth-service';
import { testEnv } from '../helpers/env';
import { jsonBody, request } from '../helpers/http';
import { LogCapture } from '../helpers/log-capture';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir';
import { registerUser } from '../helpers/users';
import { openSocket } from '../helpers/ws-client';

/**
 * What an existing web client of this protocol needs (issue 12): the protocol's vocabulary in the
 * history, honest session config, the runtime facts, permanent deletion, and clear turn endings.
 */
let service: RunningService;
let api: string;
let token: string;
const provider = new ScriptedProvider();
const tools = new TestTools();

const auth = () => ({ authorization: `Bearer ${token}` });
const post = (url: string, body: unknown) => request(`${api}${url}`, jsonBody(body, auth()));
const send = (url: string, method: string, body?: unknown) =>
  request(`${api}${url}`, { method, headers: { 'content-type': 'application/json', ...auth() }, body: body === undefined ? undefined : JSON.stringify(body) });
const newSession = async (body: unknown = {}) => (await post('/sessions', body)).body.data.id as string;

beforeAll(async () => {
  const cwd = makeTempDir();
  writeFileSync(path.join(cwd, 'config.yaml'), 'agent:\n  default_tools: [lookup, save_note]\n');
  service = await startService({ env: testEnv(path.join(cwd, 'data'), GENEROUS_RATE_LIMITS), cwd, logDestination: new LogCapture(), provider, tools });
  api = `http://127.0.0.1:${service.port}/api/v1`;
  token = (await registerUser(api, 'client')).token;
});

afterAll(async () => {
  await service.stop();
  removeTempDirs();
});

beforeEach(() => {
  provider.rounds = [];
  provider.pieces = ['Done', '.'];
  provider.pauseBefore = null;
});

it('history tool_calls use the frames’ vocabulary: tool_call_id, tool_name, input, output, duration_ms, error', async () => {
  const id = await newSession();
  provider.rounds = [{ text: ['Looking.'], calls: [{ id: 'c1', name: 'lookup', arguments: '{"word":"hub"}' }] }, { text: ['Found it.'] }];
  expect((await post(`/sessions/${id}/messages?sync=true`, { text: 'what is a hub?' })).status).toBe(200);
  const items = (await request(`${api}/sessions/${id}/messages`, { headers: auth() })).body.data.items;
  const round = items.find((item: any) => item.role === 'assistant' && item.tool_calls.length > 0);
  expect(round.tool_calls).toEqual([
    { tool_call_id: 'c1', tool_name: 'lookup', input: { word: 'hub' }, output: expect.stringContaining('hub'), duration_ms: expect.any(Number), error: null },
  ]);
  expect(items.filter((item: any) => item.role === 'assistant' && item.tool_calls.length === 0).map((item: any) => item.tool_calls)).toEqual([[]]);
});

it('?sync=true answers a cancelled turn with 409 CANCELLED, never 500', async () => {
  const id = await newSession();
  provider.pauseBefore = 1;
  const waiting = post(`/sessions/${id}/messages?sync=true`, { text: 'a long one' });
  await provider.paused();
  expect((await post(`/sessions/${id}/cancel`, {})).status).toBe(202);
  const answer = await waiting;
  provider.release();
  expect(answer.status).toBe(409);
  expect(answer.body.error.code).toBe('CANCELLED');
});

it('done names the workflow that answered and why; the stored reply says so too; the session lists that workflow’s tools', async () => {
  const created = await post('/assistant/workflows', {
    name: 'lookups',
    system_prompt: 'You look things up.',
    tool_list: 'lookup',
    triggers: { keywords: ['dictionary'] },
    binding_channels: ['web'],
  });
  expect(created.status).toBe(201);
  const id = await newSession();
  const done = await post(`/sessions/${id}/messages?sync=true`, { text: 'check the dictionary please' });
  expect(done.body.data).toMatchObject({ workflow: 'lookups', routing_reason: 'trigger', turn_id: expect.any(String) });
  const items = (await request(`${api}/sessions/${id}/messages`, { headers: auth() })).body.data.items;
  expect(items.map((item: any) => item.workflow_id)).toEqual([created.body.data.id, created.body.data.id]);
  const session = (await request(`${api}/sessions/${id}`, { headers: auth() })).body.data;
  expect(session).toMatchObject({ active_workflow_id: created.body.data.id, active_tools: ['lookup'] });

  // Tools outside the pin are not offered as loadable; each item has a short description and is_mcp.
  const listed = (await request(`${api}/sessions/${id}/tools`, { headers: auth() })).body.data;
  const byName = Object.fromEntries(listed.map((tool: any) => [tool.name, tool]));
  expect(byName.lookup).toMatchObject({ status: 'active', short_description: 'Looks a word up.', is_mcp: false });
  expect(byName.save_note).toMatchObject({ status: 'unavailable', reason: expect.stringContaining('"lookups" pins its tool list') });
  await expect(send('/assistant/workflows/lookups', 'DELETE')).resolves.toMatchObject({ status: 204 });
});

it('session config: every key is honoured, an unknown key or model is refused with 422 naming it', async () => {
  const unknown = await post('/sessions', { config: { temperature: 0.2 } });
  expect(unknown.status).toBe(422);
  expect(JSON.stringify(unknown.body.error.details.fields)).toContain('temperature');
  const model = await post('/sessions', { config: { model: 'gpt-17' } });
  expect(model.status).toBe(422);
  expect(Object.keys(model.body.error.details.fields)).toEqual(['config.model']);

  const id = await newSession({
    config: { model: 'scripted-1', system_prompt: 'You are a pirate.', memory_mode: 'code', max_steps: 1, context_compression: false },
  });
  provider.rounds = [{ calls: [{ id: 'm1', name: 'lookup', arguments: '{"word":"a"}' }] }, { text: ['Arr.'] }];
  const before = provider.requests.length;
  expect((await post(`/sessions/${id}/messages?sync=true`, { text: 'ahoy' })).status).toBe(200);
  const sent = provider.requests.slice(before);
  expect(sent[0]!.messages[0]).toEqual({ role: 'system', content: 'You are a pirate.' });
  // max_steps 1: one round may call tools, the next is asked without tools (the default would offer them again).
  expect(sent.map((call) => (call.tools ?? []).length > 0)).toEqual([true, false]);
  expect((await request(`${api}/sessions/${id}/memory`, { headers: auth() })).body.data.mode).toBe('code');
  expect((await send(`/sessions/${id}`, 'PATCH', { config: { max_steps: 0 } })).status).toBe(422);
});

it('GET /config and /config/models: non-secret runtime facts', async () => {
  const facts = (await request(`${api}/config`, { headers: auth() })).body.data;
  expect(facts).toEqual({
    provider: 'scripted',
    model: 'scripted-1',
    context_window: 8192,
    delegate_enabled: true,
    modes: ['normal', 'think', 'delegate'],
    memory_modes: ['conversation', 'code', 'reasoning'],
    channels: ['web'],
  });
  expect((await request(`${api}/config/models`, { headers: auth() })).body.data).toEqual([
    { alias: 'scripted-1', provider: 'scripted', model_name: 'scripted-1', is_active: true },
  ]);
  expect((await request(`${api}/config`)).status).toBe(401);
});

it('DELETE /sessions/{id}?permanent=true deletes the session and its messages; plain DELETE archives', async () => {
  const id = await newSession();
  await post(`/sessions/${id}/messages?sync=true`, { text: 'remember me' });
  expect((await send(`/sessions/${id}`, 'DELETE')).body.data.archived_at).not.toBeNull();
  expect((await send(`/sessions/${id}?permanent=true`, 'DELETE')).status).toBe(204);
  expect((await request(`${api}/sessions/${id}`, { headers: auth() })).status).toBe(404);
  const [rows] = await service.storage.sequelize.query('SELECT count(*) AS n FROM messages WHERE session_id = :id', { replacements: { id } });
  expect(Number((rows as { n: number }[])[0]!.n)).toBe(0);
  const socket = await openSocket(`ws://127.0.0.1:${service.port}/ws/v1/sessions/${id}`, { headers: auth() });
  expect((await socket.closed).code).toBe(4004);
});

it('POST /auth/api-keys takes expires_in_days: null as no expiry', async () => {
  const created = await post('/auth/api-keys', { label: 'forever', expires_in_days: null });
  expect(created.status).toBe(201);
  expect(created.body.data.expires_at).toBeNull();
});
