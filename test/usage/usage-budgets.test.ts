import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { startService, type RunningService } from '../../src/main';
import { ScriptedProvider } from '../fakes/scripted-provider';
import { GENEROUS_RATE_LIMITS } from '../helpers/auth-service';
import { testEnv } from '../helpers/env';
import { jsonBody, request } from '../helpers/http';
import { LogCapture } from '../helpers/log-capture';
import { scrape } from '../helpers/scrape';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir';
import { registerUser, type TestUser } from '../helpers/users';
import { openSocket } from '../helpers/ws-client';

/**
 * GET /api/v1/usage and daily token budgets on the web channel: a turn over budget is refused in
 * the user's own channel (an `error` frame with BUDGET_EXCEEDED; 429 for `?sync=true`), before the
 * model is called. The scripted model spends 11 input + 4 output = 15 tokens a turn.
 */
const TOKENS_PER_TURN = 15;
const CONFIG = ['usage:', '  budgets:', '    per_user: 40', '    users:', '      generous: 1000000', '    workflows:', '      triage: 20', ''].join('\n');

let service: RunningService;
let provider: ScriptedProvider;
let api: string;
let admin: TestUser;
let alice: TestUser;
let generous: TestUser;
const METRICS_TOKEN = 'metrics-token-0123456789';

beforeAll(async () => {
  const cwd = makeTempDir();
  writeFileSync(path.join(cwd, 'config.yaml'), CONFIG);
  provider = new ScriptedProvider();
  service = await startService({
    env: testEnv(makeTempDir(), { ...GENEROUS_RATE_LIMITS, SERVICE_METRICS_ENABLED: 'true', SERVICE_METRICS_TOKEN: METRICS_TOKEN }),
    cwd,
    logDestination: new LogCapture(),
    provider,
  });
  api = `http://127.0.0.1:${service.port}/api/v1`;
  admin = await registerUser(api, 'root');
  alice = await registerUser(api, 'alice');
  generous = await registerUser(api, 'generous');
  const workflow = { name: 'triage', system_prompt: 'Sort tickets.', tool_list: 'current_time', knowledge_base_ids: [], triggers: { keywords: ['ticket'] } };
  expect((await request(`${api}/assistant/workflows`, jsonBody(workflow, { authorization: `Bearer ${admin.token}` }))).status).toBe(201);
});

afterAll(async () => {
  await service.stop();
  removeTempDirs();
});

const as = (who: TestUser) => ({ authorization: `Bearer ${who.token}` });
const newSession = async (who: TestUser) => (await request(`${api}/sessions`, jsonBody({}, as(who)))).body.data.id as string;
const ask = (who: TestUser, sessionId: string, text: string, metadata: Record<string, unknown> = {}) =>
  request(`${api}/sessions/${sessionId}/messages?sync=true`, jsonBody({ text, metadata }, as(who)));

it('refuses a user over their daily budget on the socket with an error frame, without calling the model', async () => {
  const sessionId = await newSession(alice);
  const socket = await openSocket(`ws://127.0.0.1:${service.port}/ws/v1/sessions/${sessionId}`, { headers: as(alice) });
  await socket.nextOfType('agent_state');
  for (const text of ['one', 'two', 'three']) {
    const before = socket.frames.at(-1)!.seq;
    socket.send({ type: 'user_message', payload: { text, mode: 'normal' } });
    await socket.nextOfType('done', before); // 15, 30, 45 spent: the third started under 40
  }
  const calls = provider.requests.length;
  const before = socket.frames.at(-1)!.seq;
  socket.send({ type: 'user_message', payload: { text: 'four', mode: 'normal' } });
  const refusal = await socket.nextOfType('error', before);
  expect(refusal.payload).toMatchObject({
    code: 'BUDGET_EXCEEDED',
    message: 'You have used your daily token budget (40 tokens; 45 spent today). It starts again at 00:00 UTC.',
  });
  await socket.next((frame) => frame.type === 'agent_state' && frame.payload.state === 'idle' && frame.seq > refusal.seq);
  expect(provider.requests.length).toBe(calls);
  socket.close();
  // Another user is not affected; one with a budget of their own neither.
  expect((await ask(generous, await newSession(generous), 'hello')).status).toBe(200);
});

it("refuses a workflow over its budget for everyone, with the workflow's name", async () => {
  const first = await ask(generous, await newSession(generous), 'a ticket', { workflow: 'triage' });
  expect(first.status).toBe(200);
  expect(first.body.data.workflow).toBe('triage');
  await ask(generous, await newSession(generous), 'another ticket', { workflow: 'triage' }); // 30 of 20: started at 15
  const refused = await ask(admin, await newSession(admin), 'one more ticket', { workflow: 'triage' });
  expect(refused.status).toBe(429);
  expect(refused.body.error).toMatchObject({
    code: 'BUDGET_EXCEEDED',
    message: 'The workflow "triage" has used its daily token budget (20 tokens). It starts again at 00:00 UTC.',
  });
  const metrics = await scrape(`http://127.0.0.1:${service.port}/metrics`, METRICS_TOKEN);
  expect(metrics.value('switchboard_budget_refusals_total', { scope: 'workflow' })).toBe(1);
  expect(metrics.value('switchboard_budget_refusals_total', { scope: 'user' })).toBe(1);
  expect(metrics.value('switchboard_turns_ended_total', { outcome: 'refused' })).toBe(2);
});

it('reports usage per day, user, workflow and channel to admins, and to a user their own only', async () => {
  const today = new Date().toISOString().slice(0, 10);
  const all = await request(`${api}/usage`, { headers: as(admin) });
  expect(all.status).toBe(200);
  const rows = all.body.data.items as any[];
  const aliceRow = rows.find((row) => row.user.key === alice.id);
  expect(aliceRow).toEqual({
    day: today,
    user: { key: alice.id, username: 'alice' },
    workflow: null,
    channel: 'web',
    input_tokens: 33,
    output_tokens: 12,
    total_tokens: 3 * TOKENS_PER_TURN,
    turns: 3,
  });
  expect(rows.find((row) => row.workflow?.name === 'triage')).toMatchObject({ user: { username: 'generous' }, total_tokens: 2 * TOKENS_PER_TURN, turns: 2 });

  const byWorkflow = await request(`${api}/usage?group_by=workflow`, { headers: as(admin) });
  expect(byWorkflow.body.data.items).toEqual([
    expect.objectContaining({ workflow: null, total_tokens: 4 * TOKENS_PER_TURN }),
    expect.objectContaining({ workflow: { id: expect.any(String), name: 'triage' }, total_tokens: 2 * TOKENS_PER_TURN }),
  ]);
  const total = await request(`${api}/usage?group_by=`, { headers: as(admin) });
  expect(total.body.data.items).toEqual([{ input_tokens: 66, output_tokens: 24, total_tokens: 6 * TOKENS_PER_TURN, turns: 6 }]);
  const byName = await request(`${api}/usage?user=alice&group_by=user`, { headers: as(admin) });
  expect(byName.body.data.items).toEqual([expect.objectContaining({ user: { key: alice.id, username: 'alice' }, total_tokens: 45 })]);
  expect((await request(`${api}/usage?workflow=triage&group_by=day`, { headers: as(admin) })).body.data.items).toEqual([
    expect.objectContaining({ day: today, total_tokens: 30 }),
  ]);
  expect((await request(`${api}/usage?from=2000-01-01&to=2000-01-31`, { headers: as(admin) })).body.data).toEqual({
    items: [],
    next_cursor: null,
    has_more: false,
    total: 0,
  });
  expect((await request(`${api}/usage?workflow=no-such-workflow`, { headers: as(admin) })).body.data).toEqual({
    items: [],
    next_cursor: null,
    has_more: false,
    total: 0,
  });

  const own = await request(`${api}/usage?group_by=user`, { headers: as(alice) });
  expect(own.body.data.items).toEqual([expect.objectContaining({ user: { key: alice.id, username: 'alice' }, total_tokens: 45 })]);
  expect((await request(`${api}/usage?user=${generous.id}`, { headers: as(alice) })).status).toBe(403);

  const paged = await request(`${api}/usage?group_by=user&limit=1`, { headers: as(admin) });
  expect(paged.body.data).toMatchObject({ has_more: true, total: 2, next_cursor: expect.any(String) }); // alice, generous: a refused turn spends nothing
  for (const bad of ['group_by=day,nonsense', 'from=2026-13-45', 'from=2026-02-01&to=2026-01-01', 'from=2020-01-01&to=2026-01-01']) {
    const response = await request(`${api}/usage?${bad}`, { headers: as(admin) });
    expect({ bad, status: response.status, code: response.body.error?.code }).toEqual({ bad, status: 422, code: 'VALIDATION_ERROR' });
  }
});
