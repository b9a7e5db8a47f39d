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
import { openSocket, type TestSocket } from '../helpers/ws-client';
import { auditRows } from '../helpers/audit';
import { parametersDigest } from '../../src/audit/digest';

/**
 * The full agent through the real stack (REST, WebSocket, queue, worker, database), with a scripted
 * model and fixture tools so every branch is reached on purpose.
 */
interface Agent {
  service: RunningService;
  provider: ScriptedProvider;
  tools: TestTools;
  api: string;
  ws: string;
  token: string;
  userId: string;
}

async function startAgent(yamlText = ''): Promise<Agent> {
  const cwd = makeTempDir();
  writeFileSync(path.join(cwd, 'config.yaml'), `agent:\n  default_tools: [lookup, web_lookup, save_note, broken, needs_key]\n${yamlText}`);
  const provider = new ScriptedProvider();
  const tools = new TestTools();
  const service = await startService({ env: testEnv(path.join(cwd, 'data'), GENEROUS_RATE_LIMITS), cwd, logDestination: new LogCapture(), provider, tools });
  const api = `http://127.0.0.1:${service.port}/api/v1`;
  const { token, id: userId } = await registerUser(api, 'root');
  return { service, provider, tools, api, ws: `ws://127.0.0.1:${service.port}/ws/v1`, token, userId };
}

async function openSession(agent: Agent): Promise<{ id: string; socket: TestSocket }> {
  const id = (await request(`${agent.api}/sessions`, jsonBody({}, { authorization: `Bearer ${agent.token}` }))).body.data.id;
  const socket = await openSocket(`${agent.ws}/sessions/${id}`, { headers: { authorization: `Bearer ${agent.token}` } });
  await socket.nextOfType('agent_state');
  return { id, socket };
}

const call = (id: string, name: string, args: unknown) => ({ id, name, arguments: typeof args === 'string' ? args : JSON.stringify(args) });
const ask = (socket: TestSocket, text: string, mode = 'normal') => socket.send({ type: 'user_message', payload: { text, mode } });
/** The frames of the turn that ends with the next `done` (or `error` + idle). */
const turnFrames = (socket: TestSocket, fromSeq: number) => socket.frames.filter((frame) => frame.seq > fromSeq);
const states = (frames: any[]) => frames.filter((frame) => frame.type === 'agent_state').map((frame) => frame.payload.state);

let agent: Agent;

beforeAll(async () => {
  agent = await startAgent('  confirmation_timeout_s: 1\n');
});

afterAll(async () => {
  await agent.service.stop();
  removeTempDirs();
});

beforeEach(() => {
  agent.provider.rounds = [];
  agent.provider.pieces = ['All', ' done', '.'];
  agent.tools.runs.length = 0;
});

describe('tools', () => {
  it('runs a tool call, feeds the result back, and marks tokens after it final', async () => {
    const { id, socket } = await openSession(agent);
    agent.provider.rounds = [{ text: ['Let me look.'], calls: [call('c1', 'lookup', { word: 'hub' })] }, { text: ['Found', ' it.'] }];
    ask(socket, 'what is a hub?');
    const done = await socket.nextOfType('done');
    const frames = turnFrames(socket, 1);
    expect(frames.map((frame) => frame.type)).toEqual([
      'agent_state', // thinking
      'agent_state', // writing
      'token',
      'tool_start',
      'tool_end',
      'token',
      'token',
      'agent_state', // done
      'done',
    ]);
    expect(frames.filter((f) => f.type === 'token').map((f) => [f.payload.text, f.payload.final])).toEqual([
      ['Let me look.', false],
      ['Found', true],
      [' it.', true],
    ]);
    const turn_id = expect.stringMatching(/^[0-9a-f-]{36}$/);
    expect(frames.find((f) => f.type === 'tool_start').payload).toEqual({ tool_name: 'lookup', tool_call_id: 'c1', input: { word: 'hub' }, turn_id });
    expect(frames.find((f) => f.type === 'tool_end').payload).toEqual({
      tool_name: 'lookup',
      tool_call_id: 'c1',
      duration_ms: expect.any(Number),
      error: null,
      turn_id,
    });
    expect(done.payload).toMatchObject({ tool_calls: 1, text: 'Let me look.Found it.' });
    expect(agent.tools.runs).toEqual([{ tool: 'lookup', input: { word: 'hub' } }]);
    const second = agent.provider.requests.at(-1)!;
    expect(second.messages.at(-1)).toEqual({ role: 'tool', toolCallId: 'c1', name: 'lookup', content: JSON.stringify({ ok: true, echoed: { word: 'hub' } }) });
    const history = await request(`${agent.api}/sessions/${id}/messages`, { headers: { authorization: `Bearer ${agent.token}` } });
    expect(history.body.data.items.map((m: any) => [m.role, m.tool_calls.length])).toEqual([
      ['user', 0],
      ['assistant', 1],
      ['tool', 0],
      ['assistant', 0],
    ]);
    socket.close();
  });

  it('runs parallel calls, and turns invalid arguments and failures into tool errors the model sees', async () => {
    const { socket } = await openSession(agent);
    agent.provider.rounds = [
      { calls: [call('a', 'lookup', { word: 'x' }), call('b', 'lookup', '{"word": '), call('c', 'broken', {}), call('d', 'nope', {})] },
      { text: ['Handled.'] },
    ];
    ask(socket, 'go');
    const done = await socket.nextOfType('done');
    const ends = Object.fromEntries(socket.frames.filter((f) => f.type === 'tool_end').map((f) => [f.payload.tool_call_id, f.payload.error]));
    expect(ends).toEqual({
      a: null,
      b: expect.stringMatching(/^Invalid arguments: the arguments are not valid JSON/),
      c: 'the tool broke',
      d: 'There is no tool "nope" in this session.',
    });
    expect(done.payload.tool_calls).toBe(4);
    const fedBack = agent.provider.requests
      .at(-1)!
      .messages.filter((m) => m.role === 'tool')
      .map((m) => m.content);
    expect(fedBack.slice(1)).toEqual([
      expect.stringMatching(/^Error: Invalid arguments/),
      'Error: the tool broke',
      'Error: There is no tool "nope" in this session.',
    ]);
    socket.close();
  });

  it('lists tools and their status over REST, and loads and disables them', async () => {
    const { id, socket } = await openSession(agent);
    const auth = { authorization: `Bearer ${agent.token}` };
    const catalogue = await request(`${agent.api}/tools`, { headers: auth });
    expect(catalogue.body.data.map((t: any) => [t.name, t.requires_confirmation, t.available])).toEqual([
      ['lookup', false, true],
      ['web_lookup', false, true],
      ['save_note', true, true],
      ['broken', false, true],
      ['needs_key', false, false],
    ]);
    const patch = (body: unknown) => request(`${agent.api}/sessions/${id}/tools`, { ...jsonBody(body, auth), method: 'PATCH' });
    const changed = await patch({ disable: ['lookup'], auto_approve: ['save_note'] });
    expect(changed.status).toBe(200);
    expect(changed.body.data.find((t: any) => t.name === 'lookup').status).toBe('disabled');
    expect(changed.body.data.find((t: any) => t.name === 'save_note').auto_approved).toBe(true);
    const refused = await patch({ load: ['needs_key'] });
    expect(refused.status).toBe(422);
    expect(refused.body.error.code).toBe('TOOL_EXPANSION_FAILED');
    expect((await patch({ load: ['ghost'] })).status).toBe(422);
    // A disabled tool is not offered to the model.
    ask(socket, 'hello');
    await socket.nextOfType('done');
    expect(agent.provider.requests.at(-1)!.tools!.map((t) => t.name)).not.toContain('lookup');
    socket.close();
  });
});

describe('confirmation', () => {
  async function confirmWith(action: string | null, extra?: (socket: TestSocket, request: any) => Promise<void>) {
    const { id, socket } = await openSession(agent);
    agent.provider.rounds = [{ calls: [call('n1', 'save_note', { text: 'remember this' })] }, { text: ['Ok.'] }];
    ask(socket, 'save it');
    const requested = await socket.nextOfType('tool_confirm_request');
    expect(requested.payload).toEqual({
      confirmation_id: expect.any(String),
      tool: 'save_note',
      parameters: { text: 'remember this' },
      message: 'Allow "save_note" to run with text: "remember this"?',
      turn_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      workflow: null, // the config default answers
    });
    if (extra) await extra(socket, requested);
    if (action) socket.send({ type: 'tool_confirm', payload: { confirmation_id: requested.payload.confirmation_id, action } });
    return { id, socket, requested };
  }

  it('allow runs the call once', async () => {
    const { socket } = await confirmWith('allow');
    await socket.nextOfType('done');
    expect(agent.tools.runs).toEqual([{ tool: 'save_note', input: { text: 'remember this' } }]);
    expect(socket.frames.find((f) => f.type === 'tool_end').payload.error).toBeNull();
    socket.close();
  });

  it('deny does not run it and tells the model, which may try again', async () => {
    const { socket } = await confirmWith('deny');
    await socket.nextOfType('done');
    expect(agent.tools.runs).toEqual([]);
    expect(socket.frames.find((f) => f.type === 'tool_end').payload.error).toMatch(/^The user denied this call/);
    expect(agent.provider.requests.at(-1)!.messages.at(-1)!.content).toMatch(/^Error: The user denied this call/);
    socket.close();
  });

  it('allow_all runs it and approves the tool for the session, persisted', async () => {
    const { id, socket } = await confirmWith('allow_all');
    await socket.nextOfType('done');
    agent.provider.rounds = [{ calls: [call('n2', 'save_note', { text: 'again' })] }, { text: ['Ok.'] }];
    const before = socket.frames.length;
    ask(socket, 'and again');
    await socket.next((f) => f.type === 'done' && socket.frames.indexOf(f) >= before);
    expect(socket.frames.slice(before).filter((f) => f.type === 'tool_confirm_request')).toEqual([]);
    expect(agent.tools.runs.map((run) => run.input.text)).toEqual(['remember this', 'again']);
    const tools = await request(`${agent.api}/sessions/${id}/tools`, { headers: { authorization: `Bearer ${agent.token}` } });
    expect(tools.body.data.find((t: any) => t.name === 'save_note').auto_approved).toBe(true);
    // The second call ran without asking: the audit trail says so, with the call's digest.
    const [auto] = await auditRows(agent.api, agent.token, { kind: 'tool.auto_approved', session_id: id });
    expect(auto).toMatchObject({
      actor: { key: 'system:allow_all', kind: 'system' },
      subject: 'save_note',
      action: 'allow',
      details: parametersDigest({ text: 'again' }),
    });
    socket.close();
  });

  it('records every answer in the audit trail: the web user who answered, the action, the tool, a parameter digest, the wait', async () => {
    for (const action of ['allow', 'deny', 'allow_all', 'disable', 'forbid_all', 'cancel']) {
      const { id, socket } = await confirmWith(action);
      await socket.next((f) => f.type === 'done' || (f.type === 'error' && f.payload.code === 'CANCELLED'));
      const [row] = await auditRows(agent.api, agent.token, { kind: 'tool.confirmation', session_id: id });
      expect(row).toMatchObject({ actor: { key: `user:${agent.userId}`, kind: 'user', name: 'root' }, subject: 'save_note', action, session_id: id });
      expect(row!.details).toMatchObject({
        ...parametersDigest({ text: 'remember this' }),
        parameter_names: ['text'],
        turn_id: expect.any(String),
        waited_ms: expect.any(Number),
      });
      expect(Date.parse(row!.details.requested_at)).toBeLessThanOrEqual(Date.parse(row!.at));
      expect(JSON.stringify(row)).not.toContain('remember this');
      socket.close();
    }
    // Filtered by actor, newest first.
    const mine = await auditRows(agent.api, agent.token, { kind: 'tool.confirmation', actor: `user:${agent.userId}` }, 6);
    expect(mine.slice(0, 6).map((row) => row.action)).toEqual(['cancel', 'forbid_all', 'disable', 'allow_all', 'deny', 'allow']);
  });

  it('disable refuses it and disables the tool for the session', async () => {
    const { id, socket } = await confirmWith('disable');
    await socket.nextOfType('done');
    expect(agent.tools.runs).toEqual([]);
    const tools = await request(`${agent.api}/sessions/${id}/tools`, { headers: { authorization: `Bearer ${agent.token}` } });
    expect(tools.body.data.find((t: any) => t.name === 'save_note').status).toBe('disabled');
    socket.close();
  });

  it('forbid_all refuses this and every later call of the turn without asking', async () => {
    const { socket } = await openSession(agent);
    agent.provider.rounds = [{ calls: [call('f1', 'save_note', { text: 'one' })] }, { calls: [call('f2', 'lookup', { word: 'two' })] }, { text: ['Gave up.'] }];
    ask(socket, 'try');
    const requested = await socket.nextOfType('tool_confirm_request');
    socket.send({ type: 'tool_confirm', payload: { confirmation_id: requested.payload.confirmation_id, action: 'forbid_all' } });
    await socket.nextOfType('done');
    expect(agent.tools.runs).toEqual([]);
    expect(socket.frames.filter((f) => f.type === 'tool_confirm_request')).toHaveLength(1);
    expect(socket.frames.filter((f) => f.type === 'tool_end').map((f) => f.payload.error)).toEqual([
      'The user blocked all further tool use in this turn.',
      'The user blocked all further tool use in this turn.',
    ]);
    socket.close();
  });

  it('forbid_all, disable and allow_all also settle the calls of the same round still waiting to ask', async () => {
    for (const [action, error, runs] of [
      ['forbid_all', 'The user blocked all further tool use in this turn.', 0],
      ['disable', 'The user disabled "save_note" for this session.', 0],
      ['allow_all', null, 2],
    ] as const) {
      agent.tools.runs.length = 0;
      const { socket } = await openSession(agent);
      agent.provider.rounds = [{ calls: [call('p1', 'save_note', { text: 'one' }), call('p2', 'save_note', { text: 'two' })] }, { text: ['Ok.'] }];
      ask(socket, 'save both');
      const requested = await socket.nextOfType('tool_confirm_request');
      socket.send({ type: 'tool_confirm', payload: { confirmation_id: requested.payload.confirmation_id, action } });
      await socket.nextOfType('done');
      expect(socket.frames.filter((f) => f.type === 'tool_confirm_request')).toHaveLength(1);
      expect(socket.frames.filter((f) => f.type === 'tool_end').map((f) => f.payload.error)).toEqual([error, error]);
      expect(agent.tools.runs).toHaveLength(runs);
      socket.close();
    }
  });

  it('cancel ends the whole turn: agent_state idle, error CANCELLED, no done', async () => {
    const { socket, requested } = await confirmWith('cancel');
    const cancelled = await socket.next((f) => f.type === 'error' && f.payload.code === 'CANCELLED');
    expect(socket.frames.find((f) => f.seq === cancelled.seq - 1)).toMatchObject({ type: 'agent_state', payload: { state: 'idle' } });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(socket.frames.filter((f) => f.type === 'done' && f.seq > requested.seq)).toEqual([]);
    expect(agent.tools.runs).toEqual([]);
    socket.close();
  });

  it('times out as deny, refuses a mismatched id, and a cancel frame unblocks a pending confirmation', async () => {
    const timedOut = await confirmWith(null, async (socket) => {
      socket.send({ type: 'tool_confirm', payload: { confirmation_id: 'not-the-one', action: 'allow' } });
      const refused = await socket.nextOfType('error');
      expect(refused.payload).toEqual({ code: 'INVALID_MESSAGE', message: 'No tool confirmation not-the-one is pending.' });
    });
    await timedOut.socket.nextOfType('done'); // after the 1 s timeout
    expect(timedOut.socket.frames.find((f) => f.type === 'tool_end').payload.error).toMatch(/^The user denied this call/);
    timedOut.socket.close();
    const [expired] = await auditRows(agent.api, agent.token, { kind: 'tool.confirmation', session_id: timedOut.id });
    expect(expired).toMatchObject({ actor: { key: 'system:timeout', kind: 'system' }, action: 'deny' });
    expect(expired!.details.waited_ms).toBeGreaterThanOrEqual(1000);

    const cancelled = await confirmWith(null, async (socket) => socket.send({ type: 'cancel', payload: {} }));
    await cancelled.socket.next((f) => f.type === 'error' && f.payload.code === 'CANCELLED');
    expect(agent.tools.runs).toEqual([]);
    cancelled.socket.close();
    // Nobody answered: the turn ended while it waited.
    const [abandoned] = await auditRows(agent.api, agent.token, { kind: 'tool.confirmation', session_id: cancelled.id });
    expect(abandoned).toMatchObject({ actor: { key: 'system:turn_ended' }, action: 'abandoned' });
  });

  it('asks again on reconnect while the confirmation is pending', async () => {
    const { id, socket, requested } = await confirmWith(null);
    socket.close();
    await socket.closed;
    const again = await openSocket(`${agent.ws}/sessions/${id}`, { headers: { authorization: `Bearer ${agent.token}` } });
    const reasked = await again.nextOfType('tool_confirm_request');
    expect(reasked.payload).toEqual(requested.payload);
    again.send({ type: 'tool_confirm', payload: { confirmation_id: reasked.payload.confirmation_id, action: 'allow' } });
    await again.nextOfType('done');
    expect(agent.tools.runs).toHaveLength(1);
    again.close();
  });
});

describe('modes', () => {
  it('think: analyzing → deep_thinking → writing, each a model call; researching when web tools are needed', async () => {
    const { socket } = await openSession(agent);
    agent.provider.rounds = [{ text: ['Task: trivia.\nNEEDS_WEB: no'] }, { text: ['Reasoning.'] }, { text: ['The', ' answer.'] }];
    ask(socket, 'why is the sky blue?', 'think');
    await socket.nextOfType('done');
    expect(states(socket.frames.slice(1))).toEqual(['thinking', 'analyzing', 'deep_thinking', 'writing', 'done']);
    expect(agent.provider.requests.slice(-3).map((r) => r.messages[0]!.content)).toEqual([
      expect.stringContaining('NEEDS_WEB'),
      expect.stringContaining('Think it through step by step'),
      expect.stringContaining('Reasoning:\nReasoning.'),
    ]);

    const before = socket.frames.at(-1).seq;
    agent.provider.rounds = [
      { text: ['Needs facts.\nNEEDS_WEB: yes'] },
      { calls: [call('w1', 'web_lookup', { query: 'release date' })] },
      { text: ['Found: 2026.'] },
      { text: ['So 2026.'] },
      { text: ['It is 2026.'] },
    ];
    ask(socket, 'when is the release?', 'think');
    await socket.nextOfType('done', before);
    const frames = turnFrames(socket, before);
    expect(states(frames)).toEqual(['thinking', 'analyzing', 'researching', 'deep_thinking', 'writing', 'done']);
    expect(agent.tools.runs).toEqual([{ tool: 'web_lookup', input: { query: 'release date' } }]);
    expect(agent.provider.requests.at(-5 + 1)!.tools!.map((t) => t.name)).toEqual(['web_lookup']);
    socket.close();
  });

  it('delegate: delegating → writing; sub-tasks run as separate model calls, merged', async () => {
    const { socket } = await openSession(agent);
    agent.provider.rounds = [{ text: ['- compare prices\n- check stock'] }, { text: ['cheap'] }, { text: ['in stock'] }, { text: ['Buy it.'] }];
    ask(socket, 'should I buy the widget?', 'delegate');
    const done = await socket.nextOfType('done');
    expect(states(socket.frames.slice(1))).toEqual(['thinking', 'delegating', 'writing', 'done']);
    const calls = agent.provider.requests.slice(-4);
    expect(calls[1]!.messages.at(-1)).toEqual({ role: 'user', content: 'compare prices' });
    expect(calls[2]!.messages.at(-1)).toEqual({ role: 'user', content: 'check stock' });
    expect(calls[3]!.messages[0]!.content).toContain('Sub-task 2: check stock\nResult: in stock');
    expect(done.payload.text).toBe('Buy it.');
    socket.close();
  });
});

describe('in-chat commands', () => {
  it('/help, /info and /tools answer without the model; /tools load refuses an unavailable tool with TOOL_EXPANSION_FAILED', async () => {
    const { socket } = await openSession(agent);
    const calls = agent.provider.requests.length;
    const answer = async (text: string) => {
      const before = socket.frames.at(-1).seq;
      ask(socket, text);
      return (await socket.nextOfType('done', before)).payload.text as string;
    };
    expect(await answer('/help')).toContain('/tools load <name>');
    expect(await answer('/info')).toMatch(/Workflow: none[\s\S]*Model: scripted-1 \(scripted\)[\s\S]*Tools: lookup, web_lookup, save_note, broken/);
    expect(await answer('/tools')).toContain('needs_key — unavailable: no API key is configured');
    const before = socket.frames.at(-1).seq;
    const failed = await answer('/tools load needs_key');
    expect(failed).toContain('Could not load "needs_key"');
    expect(socket.frames.find((f) => f.type === 'error' && f.seq > before).payload.code).toBe('TOOL_EXPANSION_FAILED');
    expect(await answer('/dance')).toContain('Unknown command "/dance"');
    expect(agent.provider.requests.length).toBe(calls);
    // Commands stay out of the model's context.
    await answer('hello model');
    expect(
      agent.provider.requests
        .at(-1)!
        .messages.filter((m) => m.role === 'user')
        .map((m) => m.content),
    ).toEqual(['hello model']);
    socket.close();
  });
});

describe('memory', () => {
  it('compacts a conversation that outgrows the budget: memory_update before done, summary via the model', async () => {
    const small = await startAgent('  working_memory_tokens: 200\nllm:\n  context_window: 600\n');
    try {
      const { id, socket } = await openSession(small);
      small.provider.pieces = ['A fairly long answer that takes up room in the context window of this small model. '.repeat(3)];
      let update: any = null;
      for (let turn = 0; turn < 8 && !update; turn += 1) {
        const before = socket.frames.at(-1).seq;
        if (turn > 0) small.provider.rounds = [];
        ask(socket, `Question number ${turn}: please tell me about the topic in some detail.`);
        const done = await socket.nextOfType('done', before);
        update = socket.frames.find((f) => f.type === 'memory_update' && f.seq > before) ?? null;
        if (update) expect(update.seq).toBeLessThan(done.seq);
      }
      expect(update?.payload).toEqual({ mode: 'conversation', tokens_used: expect.any(Number), summarized: true, turn_id: expect.any(String) });
      const memory = await request(`${small.api}/sessions/${id}/memory`, { headers: { authorization: `Bearer ${small.token}` } });
      expect(memory.body.data).toMatchObject({ mode: 'conversation', summary: expect.any(String), context_window: 600 });
      expect(memory.body.data.summarized_messages).toBeGreaterThan(0);
      expect(memory.body.data.tokens_used).toBeLessThan(400);
      const auth = { authorization: `Bearer ${small.token}` };
      const patched = await request(`${small.api}/sessions/${id}/memory`, { ...jsonBody({ mode: 'code' }, auth), method: 'PATCH' });
      expect(patched.body.data.mode).toBe('code');
      const cleared = await request(`${small.api}/sessions/${id}/memory`, { headers: auth, method: 'DELETE' });
      expect(cleared.body.data).toMatchObject({ summary: null, window_messages: 0 });
      socket.close();
    } finally {
      await small.service.stop();
    }
  });
});
