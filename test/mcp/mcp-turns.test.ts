import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { FakeOpenAiServer, openAiChunk, openAiTextReply } from '../fakes/openai-server';
import type { ScriptedReply } from '../fakes/scripted-http-server';
import { startTestHub, type TestHub } from '../helpers/hub';
import { runCli } from '../helpers/cli';
import { jsonBody, request } from '../helpers/http';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir';
import { registerUser, type TestUser } from '../helpers/users';
import { openSocket, type TestSocket } from '../helpers/ws-client';
import { EVERYTHING_SERVER, TEST_SERVER, eventually, testServerCalls } from './mcp-servers';

jest.setTimeout(60_000);

/**
 * MCP tools through the whole hub: a workflow pins them, the fake OpenAI-compatible model calls
 * them by their model names, and the same confirmation flow as built-in tools applies.
 */
let model: FakeOpenAiServer;
let hub: TestHub;
let admin: TestUser;
let quickDir: string;
let askingDir: string;
const METRICS_TOKEN = 'metrics-token-for-the-mcp-test';

beforeAll(async () => {
  model = new FakeOpenAiServer();
  const modelUrl = await model.start();
  quickDir = makeTempDir();
  askingDir = makeTempDir();
  const configDir = makeTempDir();
  const configFile = path.join(configDir, 'config.yaml');
  writeFileSync(
    configFile,
    [
      'mcp:',
      '  servers:',
      '    everything:',
      `      command: ${JSON.stringify(process.execPath)}`,
      `      args: [${JSON.stringify(EVERYTHING_SERVER)}]`,
      '    quick:',
      `      command: ${JSON.stringify(process.execPath)}`,
      `      args: [${JSON.stringify(TEST_SERVER)}]`,
      '      env: { MCP_TEST_DIR: "${QUICK_DIR}", SECRET_TOKEN: "${MCP_SECRET}" }',
      '      confirm: never',
      '    asking:',
      `      command: ${JSON.stringify(process.execPath)}`,
      `      args: [${JSON.stringify(TEST_SERVER)}]`,
      `      env: { MCP_TEST_DIR: ${JSON.stringify(askingDir)}, MCP_TEST_EXTRA_TOOL: "k8s.restart" }`,
      '    broken:',
      '      command: /nonexistent/mcp-server',
      '',
    ].join('\n'),
  );
  hub = await startTestHub({
    env: {
      SERVICE_CONFIG_FILE: configFile,
      SERVICE_LLM_PROVIDER: 'openai',
      SERVICE_LLM_BASE_URL: modelUrl,
      SERVICE_LLM_MODEL: 'fake-model',
      SERVICE_LLM_API_KEY: 'sk-test',
      QUICK_DIR: quickDir,
      MCP_SECRET: 'mcp-secret-value-never-logged',
      SERVICE_METRICS_ENABLED: 'true',
      SERVICE_METRICS_TOKEN: METRICS_TOKEN,
    },
  });
  admin = await registerUser(hub.api, 'admin');
  const workflow = { name: 'ops', system_prompt: 'You run operations.', tool_list: 'current_time, everything.echo, quick.*, asking.echo' };
  const created = await request(`${hub.api}/assistant/workflows`, jsonBody(workflow, auth(admin)));
  expect(created.status).toBe(201);
});

afterAll(async () => {
  await hub?.stop();
  await model?.stop();
  removeTempDirs();
});

function auth(user: TestUser): Record<string, string> {
  return { authorization: `Bearer ${user.token}` };
}

/** A model turn that calls one tool. */
function toolCall(id: string, name: string, input: Record<string, unknown>): ScriptedReply {
  return {
    kind: 'stream',
    events: [
      openAiChunk.delta({ role: 'assistant', content: '' }),
      openAiChunk.toolCall({ index: 0, id, type: 'function', function: { name, arguments: JSON.stringify(input) } }),
      openAiChunk.finish('tool_calls'),
      openAiChunk.usage(20, 5),
      openAiChunk.done(),
    ],
  };
}

/** A session on the `ops` workflow with its socket open. */
async function opsSession(): Promise<{ sessionId: string; socket: TestSocket }> {
  const sessionId = (await request(`${hub.api}/sessions`, jsonBody({ workflow: 'ops' }, auth(admin)))).body.data.id as string;
  const socket = await openSocket(`ws://127.0.0.1:${hub.service.port}/ws/v1/sessions/${sessionId}`, { headers: auth(admin) });
  await socket.nextOfType('agent_state');
  return { sessionId, socket };
}

/** The text the model was given as a tool's result in a request. */
function toolResults(requestIndex: number): string[] {
  const messages = model.requests[requestIndex]!.body.messages as { role: string; content: string }[];
  return messages.filter((message) => message.role === 'tool').map((message) => message.content);
}

it('offers the pinned MCP tools by their model names, and never one outside the pin', async () => {
  const { socket } = await opsSession();
  model.enqueue(toolCall('call_sum', 'everything__get-sum', { a: 1, b: 2 }), openAiTextReply(['No sum.']));
  const before = model.requests.length;
  socket.send({ type: 'user_message', payload: { text: 'add 1 and 2', mode: 'normal' } });
  const end = await socket.next((frame) => frame.type === 'tool_end');
  expect(end.payload.error).toMatch(/no tool|not/i);
  await socket.nextOfType('done');
  const offered = (model.requests[before]!.body.tools as { function: { name: string } }[]).map((tool) => tool.function.name).sort();
  expect(offered).toContain('everything__echo');
  expect(offered).toContain('asking__echo');
  expect(offered).toContain('quick__echo');
  expect(offered).toContain('quick__slow');
  expect(offered).toContain('current_time');
  expect(offered).not.toContain('everything__get-sum');
  expect(offered).not.toContain('asking__slow');
  socket.close();
});

it('everything__echo asks for confirmation; Allow runs it and the model gets the answer', async () => {
  const { sessionId, socket } = await opsSession();
  const before = model.requests.length;
  model.enqueue(toolCall('call_echo', 'everything__echo', { message: 'hello from the hub' }), openAiTextReply(['It said hello.']));
  socket.send({ type: 'user_message', payload: { text: 'echo hello', mode: 'normal' } });
  const ask = await socket.nextOfType('tool_confirm_request');
  expect(ask.payload).toMatchObject({ tool: 'everything__echo', parameters: { message: 'hello from the hub' } });
  socket.send({ type: 'tool_confirm', payload: { confirmation_id: ask.payload.confirmation_id, action: 'allow' } });
  const end = await socket.next((frame) => frame.type === 'tool_end');
  expect(end.payload).toMatchObject({ tool_name: 'everything__echo', tool_call_id: 'call_echo', error: null });
  await socket.nextOfType('done');
  expect(toolResults(before + 1).join('\n')).toContain('Echo: hello from the hub');
  const history = await request(`${hub.api}/sessions/${sessionId}/messages`, { headers: auth(admin) });
  const calls = history.body.data.items.flatMap((message: { tool_calls: unknown[] }) => message.tool_calls);
  expect(calls).toContainEqual(
    expect.objectContaining({ tool_name: 'everything__echo', output: expect.stringContaining('Echo: hello from the hub'), error: null }),
  );
  socket.close();
});

it('Deny: the server never sees the call', async () => {
  const { socket } = await opsSession();
  model.enqueue(toolCall('call_deny', 'asking__echo', { message: 'do not send' }), openAiTextReply(['Understood.']));
  socket.send({ type: 'user_message', payload: { text: 'echo it', mode: 'normal' } });
  const ask = await socket.nextOfType('tool_confirm_request');
  expect(ask.payload.tool).toBe('asking__echo');
  socket.send({ type: 'tool_confirm', payload: { confirmation_id: ask.payload.confirmation_id, action: 'deny' } });
  const end = await socket.next((frame) => frame.type === 'tool_end');
  expect(end.payload.error).toMatch(/denied/);
  await socket.nextOfType('done');
  expect(testServerCalls(askingDir)).toEqual([]);
  socket.close();
});

it('confirm: never runs at once; a crash mid-call is a tool error, not a failed turn', async () => {
  const { socket } = await opsSession();
  model.enqueue(toolCall('call_quick', 'quick__echo', { message: 'fast' }), openAiTextReply(['Done.']));
  socket.send({ type: 'user_message', payload: { text: 'echo fast', mode: 'normal' } });
  const end = await socket.next((frame) => frame.type === 'tool_end');
  expect(end.payload).toMatchObject({ tool_name: 'quick__echo', error: null });
  expect(socket.frames.some((frame) => frame.type === 'tool_confirm_request')).toBe(false);
  await socket.nextOfType('done');
  expect(testServerCalls(quickDir)).toContain('echo {"message":"fast"}');

  model.enqueue(toolCall('call_crash', 'quick__crash', {}), openAiTextReply(['It crashed.']));
  const doneSeq = socket.frames.filter((frame) => frame.type === 'done').pop().seq;
  socket.send({ type: 'user_message', payload: { text: 'crash it', mode: 'normal' } });
  const crashed = await socket.next((frame) => frame.type === 'tool_end' && frame.payload.tool_call_id === 'call_crash');
  expect(crashed.payload.error).toMatch(/stopped during the call/);
  const done = await socket.nextOfType('done', doneSeq);
  expect(done.payload.text).toBe('It crashed.');
  socket.close();
});

it('Allow all, Disable and Forbid all apply to MCP tools as to built-in ones', async () => {
  const { socket } = await opsSession();
  const callsBefore = testServerCalls(askingDir).length;
  let doneSeq = -Infinity;
  const turn = async (replies: ScriptedReply[], answer?: string) => {
    model.enqueue(...replies);
    socket.send({ type: 'user_message', payload: { text: 'go', mode: 'normal' } });
    if (answer) {
      const ask = await socket.next((frame) => frame.type === 'tool_confirm_request' && frame.seq > doneSeq);
      socket.send({ type: 'tool_confirm', payload: { confirmation_id: ask.payload.confirmation_id, action: answer } });
    }
    const done = await socket.nextOfType('done', doneSeq);
    const frames = socket.frames.filter((frame) => frame.seq > doneSeq && frame.seq < done.seq);
    doneSeq = done.seq;
    return frames;
  };
  // forbid_all: the call is refused, and so is the next one of the round (it waited for the answer); the server sees neither.
  const twice: ScriptedReply = {
    kind: 'stream',
    events: [
      openAiChunk.delta({ role: 'assistant', content: '' }),
      openAiChunk.toolCall({ index: 0, id: 'call_f1', type: 'function', function: { name: 'asking__echo', arguments: '{"message":"a"}' } }),
      openAiChunk.toolCall({ index: 1, id: 'call_f2', type: 'function', function: { name: 'asking__echo', arguments: '{"message":"b"}' } }),
      openAiChunk.finish('tool_calls'),
      openAiChunk.done(),
    ],
  };
  const forbidden = await turn([twice, openAiTextReply(['ok'])], 'forbid_all');
  const ends = forbidden.filter((frame) => frame.type === 'tool_end');
  expect(ends.map((frame) => frame.payload.error)).toEqual([
    expect.stringMatching(/blocked all further tool use/),
    expect.stringMatching(/blocked all further tool use/),
  ]);
  expect(testServerCalls(askingDir).length).toBe(callsBefore);

  // allow_all: this call runs, and the next one runs without asking.
  await turn([toolCall('call_a1', 'asking__echo', { message: 'one' }), openAiTextReply(['ok'])], 'allow_all');
  const second = await turn([toolCall('call_a2', 'asking__echo', { message: 'two' }), openAiTextReply(['ok'])]);
  expect(second.some((frame) => frame.type === 'tool_confirm_request')).toBe(false);
  expect(second.find((frame) => frame.type === 'tool_end').payload.error).toBeNull();
  expect(testServerCalls(askingDir).slice(callsBefore)).toEqual(['echo {"message":"one"}', 'echo {"message":"two"}']);

  // disable: refused now and never offered again in this session.
  await turn([toolCall('call_d1', 'everything__echo', { message: 'x' }), openAiTextReply(['ok'])], 'disable');
  const requests = model.requests.length;
  await turn([openAiTextReply(['nothing to do'])]);
  const offered = (model.requests[requests]!.body.tools as { function: { name: string } }[]).map((tool) => tool.function.name);
  expect(offered).not.toContain('everything__echo');
  expect(offered).toContain('asking__echo');
  socket.close();
});

it('/tools in chat names the MCP tools and their server', async () => {
  const { socket } = await opsSession();
  socket.send({ type: 'user_message', payload: { text: '/tools', mode: 'normal' } });
  const done = await socket.nextOfType('done');
  expect(done.payload.text).toContain('everything__echo (MCP: everything) — active (asks for confirmation)');
  expect(done.payload.text).toContain('asking__echo (MCP: asking) — active (asks for confirmation)');
  expect(done.payload.text).toMatch(/everything__get-sum \(MCP: everything\) — unavailable.*: .*add "everything\.get-sum" to its tool_list/);
  socket.close();
});

it('counts MCP calls per server and tool', async () => {
  const scrape = await fetch(`http://127.0.0.1:${hub.service.port}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
  const text = await scrape.text();
  expect(text).toMatch(/switchboard_mcp_calls_total\{[^}]*server="everything",tool="echo",outcome="ok"[^}]*\} [1-9]/);
  expect(text).toMatch(/switchboard_mcp_calls_total\{[^}]*server="quick",tool="crash",outcome="error"[^}]*\} 1/);
  expect(text).toMatch(/switchboard_mcp_call_duration_seconds_count\{[^}]*server="quick",tool="echo"/);
  expect(text).toMatch(/switchboard_tool_calls_total\{[^}]*tool="everything__echo"/);
});

it('lists MCP tools with is_mcp and server in /tools, the session and the operations view', async () => {
  const catalogue = await request(`${hub.api}/tools`, { headers: auth(admin) });
  expect(catalogue.body.data).toContainEqual(expect.objectContaining({ name: 'everything__echo', is_mcp: true, server: 'everything', available: true }));
  expect(catalogue.body.data).toContainEqual(expect.objectContaining({ name: 'current_time', is_mcp: false, server: null }));

  const { sessionId, socket } = await opsSession();
  socket.close();
  const sessionTools = await request(`${hub.api}/sessions/${sessionId}/tools`, { headers: auth(admin) });
  expect(sessionTools.body.data).toContainEqual(expect.objectContaining({ name: 'everything__echo', is_mcp: true, server: 'everything', status: 'active' }));
  expect(sessionTools.body.data).toContainEqual(
    expect.objectContaining({ name: 'everything__get-sum', status: 'unavailable', reason: expect.stringContaining('everything.get-sum') }),
  );

  const servers = await request(`${hub.api}/mcp/servers`, { headers: auth(admin) });
  expect(servers.status).toBe(200);
  const everything = servers.body.data.find((server: { name: string }) => server.name === 'everything');
  expect(everything).toMatchObject({ transport: 'stdio', state: 'ready', confirm: 'always', last_error: null });
  expect(everything.tools).toContainEqual({
    name: 'echo',
    model_name: 'everything__echo',
    description: expect.any(String),
    requires_confirmation: true,
    changed: false,
  });
  expect(JSON.stringify(servers.body)).not.toContain('mcp-secret-value');
  expect(hub.logs.text).not.toContain('mcp-secret-value');

  // A session without a pinning workflow cannot load an MCP tool.
  const free = (await request(`${hub.api}/sessions`, jsonBody({}, auth(admin)))).body.data.id as string;
  const load = await request(`${hub.api}/sessions/${free}/tools`, { ...jsonBody({ load: ['everything__echo'] }, auth(admin)), method: 'PATCH' });
  expect(load.status).toBe(409);
  expect(load.body.error.message).toContain('MCP tool');
  const freeTools = await request(`${hub.api}/sessions/${free}/tools`, { headers: auth(admin) });
  expect(freeTools.body.data).toContainEqual(
    expect.objectContaining({ name: 'everything__echo', status: 'unavailable', reason: expect.stringContaining('offered only by a workflow that pins them') }),
  );

  const user = await registerUser(hub.api, 'plainuser');
  expect((await request(`${hub.api}/mcp/servers`, { headers: auth(user) })).status).toBe(403);

  // A failed MCP server makes the hub degraded, not down.
  const ready = await request(`${hub.api}/health/ready`);
  expect(ready.status).toBe(200);
  expect(ready.body.data).toMatchObject({
    status: 'degraded',
    mcp_servers: { everything: { status: 'ready' }, broken: { status: 'failed', error: expect.any(String) } },
  });
});

it('restarts a server on request, refuses unknown servers and tools, and checks pins at workflow save', async () => {
  const restarted = await request(`${hub.api}/mcp/servers/quick/restart`, { method: 'POST', headers: auth(admin) });
  expect(restarted.status).toBe(200);
  expect(restarted.body.data).toMatchObject({ name: 'quick', state: 'ready' });
  expect(restarted.body.data.restarts).toBeGreaterThanOrEqual(1);
  expect((await request(`${hub.api}/mcp/servers/nosuch/restart`, { method: 'POST', headers: auth(admin) })).status).toBe(404);
  expect((await request(`${hub.api}/mcp/servers/quick/tools/nosuch/approve`, { method: 'POST', headers: auth(admin) })).status).toBe(404);
  const approved = await request(`${hub.api}/mcp/servers/quick/tools/echo/approve`, { method: 'POST', headers: auth(admin) });
  expect(approved.body.data).toMatchObject({ name: 'echo', model_name: 'quick__echo', changed: false });
  await eventually(async () => (await request(`${hub.api}/audit?kind=mcp.tool_approved`, { headers: auth(admin) })).body.data.total === 1, 'audited');

  const bad = await request(
    `${hub.api}/assistant/workflows`,
    jsonBody({ name: 'bad', system_prompt: 'x', tool_list: 'nosuch.echo, everything.*' }, auth(admin)),
  );
  expect(bad.status).toBe(422);
  expect(bad.body.error.details.fields.tool_list[0].message).toContain('nosuch.echo');
  expect(bad.body.error.details.fields.tool_list[0].message).not.toContain('everything');
});

it('switchboard mcp list | restart | approve', async () => {
  const key = (await request(`${hub.api}/auth/api-keys`, jsonBody({ label: 'mcp cli' }, auth(admin)))).body.data.key as string;
  const env = { SWITCHBOARD_URL: `http://127.0.0.1:${hub.service.port}`, SWITCHBOARD_API_KEY: key, SWITCHBOARD_CONFIG_DIR: makeTempDir() };
  const list = await runCli(['mcp', 'list'], env);
  expect(list).toMatchObject({ code: 0, stderr: '' });
  expect(list.stdout).toMatch(/everything\s+stdio\s+ready/);
  expect(list.stdout).toMatch(/everything__echo\s+asks for confirmation/);
  expect(list.stdout).toMatch(/quick__echo\s+runs without asking/);
  expect(list.stdout).toMatch(/broken\s+stdio\s+failed/);
  const json = JSON.parse((await runCli(['mcp', 'list', '--json'], env)).stdout) as { name: string }[];
  expect(json.map((server) => server.name)).toEqual(['everything', 'quick', 'asking', 'broken']);
  const restart = await runCli(['mcp', 'restart', 'asking'], env);
  expect(restart).toMatchObject({ code: 0, stdout: expect.stringContaining('Restarted "asking": ready') });
  const approve = await runCli(['mcp', 'approve', 'everything', 'echo'], env);
  expect(approve).toMatchObject({ code: 0, stdout: 'Approved everything.echo: offered to the model again as everything__echo.\n' });
  const refused = await runCli(['mcp', 'restart', 'nosuch'], env);
  expect(refused.code).not.toBe(0);
  expect(refused.stderr).toContain('No MCP server named "nosuch"');
});

it('an approval policy over an MCP tool of a `confirm: never` server: asked of the approvers, never run on the requester word (issue 30)', async () => {
  const bob = await registerUser(hub.api, 'bob-approver');
  const guarded = {
    name: 'guarded',
    system_prompt: 'You run guarded operations.',
    tool_list: 'quick.echo',
    approvals: [{ tools: ['quick.*'], approvers: { users: ['bob-approver'] } }],
  };
  expect((await request(`${hub.api}/assistant/workflows`, jsonBody(guarded, auth(admin)))).status).toBe(201);
  const sessionId = (await request(`${hub.api}/sessions`, jsonBody({ workflow: 'guarded' }, auth(admin)))).body.data.id as string;
  const socket = await openSocket(`ws://127.0.0.1:${hub.service.port}/ws/v1/sessions/${sessionId}`, { headers: auth(admin) });
  await socket.nextOfType('agent_state');
  const callsBefore = testServerCalls(quickDir).length;
  model.enqueue(toolCall('call_guarded', 'quick__echo', { message: 'guarded' }), openAiTextReply(['Guarded echo done.']));
  socket.send({ type: 'user_message', payload: { text: 'echo guarded', mode: 'normal' } });
  const ask = await socket.nextOfType('tool_confirm_request');
  expect(ask.payload).toMatchObject({ tool: 'quick__echo', approval: expect.objectContaining({ quorum: 1, approvals: 0 }) });
  // The requester (an admin, but not among this policy's approvers) cannot approve their own request.
  const own = await request(`${hub.api}/approvals/${ask.payload.confirmation_id}`, jsonBody({ action: 'allow' }, auth(admin)));
  expect(own.status).toBe(403);
  expect(testServerCalls(quickDir)).toHaveLength(callsBefore);
  const approved = await request(`${hub.api}/approvals/${ask.payload.confirmation_id}`, jsonBody({ action: 'allow' }, auth(bob)));
  expect(approved.body.data).toMatchObject({ decided: 'allow' });
  const end = await socket.next((frame) => frame.type === 'tool_end' && frame.payload.tool_call_id === 'call_guarded');
  expect(end.payload.error).toBeNull();
  await socket.nextOfType('done');
  expect(testServerCalls(quickDir).slice(callsBefore)).toEqual(['echo {"message":"guarded"}']);
  socket.close();
});

it("an approval policy names an MCP tool whose model name was sanitised (`asking.k8s.restart`, called `asking__k8s_restart`): the MCP hub's name table maps it back (issue 30)", async () => {
  const carol = await registerUser(hub.api, 'carol-approver');
  const guarded = {
    name: 'sanitised',
    system_prompt: 'You restart things.',
    tool_list: 'asking.k8s.restart',
    // Split on `__`, the model's name would read `asking.k8s_restart` and match nothing: the call would be asked of the requester.
    approvals: [{ tools: ['asking.k8s.restart'], approvers: { users: ['carol-approver'] } }],
  };
  expect((await request(`${hub.api}/assistant/workflows`, jsonBody(guarded, auth(admin)))).status).toBe(201);
  const sessionId = (await request(`${hub.api}/sessions`, jsonBody({ workflow: 'sanitised' }, auth(admin)))).body.data.id as string;
  const socket = await openSocket(`ws://127.0.0.1:${hub.service.port}/ws/v1/sessions/${sessionId}`, { headers: auth(admin) });
  await socket.nextOfType('agent_state');
  const callsBefore = testServerCalls(askingDir).length;
  model.enqueue(toolCall('call_sanitised', 'asking__k8s_restart', { message: 'restart web' }), openAiTextReply(['Restarted.']));
  socket.send({ type: 'user_message', payload: { text: 'restart web', mode: 'normal' } });
  const ask = await socket.nextOfType('tool_confirm_request');
  expect(ask.payload).toMatchObject({ tool: 'asking__k8s_restart', approval: expect.objectContaining({ approvers: '@carol-approver', quorum: 1 }) });
  const own = await request(`${hub.api}/approvals/${ask.payload.confirmation_id}`, jsonBody({ action: 'allow' }, auth(admin)));
  expect(own.status).toBe(403);
  const approved = await request(`${hub.api}/approvals/${ask.payload.confirmation_id}`, jsonBody({ action: 'allow' }, auth(carol)));
  expect(approved.body.data).toMatchObject({ decided: 'allow' });
  await socket.next((frame) => frame.type === 'tool_end' && frame.payload.tool_call_id === 'call_sanitised');
  await socket.nextOfType('done');
  expect(testServerCalls(askingDir).slice(callsBefore)).toEqual(['k8s.restart {"message":"restart web"}']);
  socket.close();
});
