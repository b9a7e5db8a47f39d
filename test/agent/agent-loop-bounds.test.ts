import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { startService, type RunningService } from '../../src/main';
import { ScriptedProvider, type ScriptedRound } from '../fakes/scripted-provider';
import { TestTools } from '../fakes/test-tools';
import { GENEROUS_RATE_LIMITS } from '../helpers/auth-service';
import { testEnv } from '../helpers/env';
import { jsonBody, request } from '../helpers/http';
import { LogCapture } from '../helpers/log-capture';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir';
import { registerUser } from '../helpers/users';
import { openSocket, type TestSocket } from '../helpers/ws-client';

/**
 * The agent loop's bounds (issue 25, "The agent loop"; decisions.md §8), through the real stack with a
 * scripted model that keeps asking for tools whatever it is offered — as some real models do once a
 * conversation holds tool calls: `max_steps` is a hard bound on tool rounds, a call for a tool not
 * offered in its round never runs, and every call that did not run carries its reason, on the wire
 * and in the history.
 */
let service: RunningService;
let provider: ScriptedProvider;
let tools: TestTools;
let api: string;
let ws: string;
let token: string;

beforeAll(async () => {
  const cwd = makeTempDir();
  writeFileSync(path.join(cwd, 'config.yaml'), 'agent:\n  default_tools: [lookup, web_lookup, save_note]\n  max_tool_rounds: 3\n');
  provider = new ScriptedProvider();
  tools = new TestTools();
  service = await startService({ env: testEnv(path.join(cwd, 'data'), GENEROUS_RATE_LIMITS), cwd, logDestination: new LogCapture(), provider, tools });
  api = `http://127.0.0.1:${service.port}/api/v1`;
  ws = `ws://127.0.0.1:${service.port}/ws/v1`;
  token = (await registerUser(api, 'root')).token;
});

afterAll(async () => {
  await service.stop();
  removeTempDirs();
});

beforeEach(() => {
  provider.rounds = [];
  provider.pieces = ['Fine.'];
  tools.runs.length = 0;
});

const auth = () => ({ authorization: `Bearer ${token}` });

async function openSession(config: Record<string, unknown> = {}): Promise<{ id: string; socket: TestSocket }> {
  const id = (await request(`${api}/sessions`, jsonBody({ config }, auth()))).body.data.id;
  const socket = await openSocket(`${ws}/sessions/${id}`, { headers: auth() });
  await socket.nextOfType('agent_state');
  return { id, socket };
}

/** A model that asks for `lookup` in every one of `rounds` responses, whether or not tools are offered. */
function greedyRounds(rounds: number, tool = 'lookup', field = 'word'): ScriptedRound[] {
  return Array.from({ length: rounds }, (_, index) => ({
    text: [`Round ${index}. `],
    calls: [{ id: `g${index}`, name: tool, arguments: JSON.stringify({ [field]: `w${index}` }) }],
  }));
}

async function history(id: string): Promise<any[]> {
  return (await request(`${api}/sessions/${id}/messages?limit=100`, { headers: auth() })).body.data.items;
}

describe('the tool-round cap is a hard bound', () => {
  it('max_steps 1: one round runs; the calls the model returns once tools are withdrawn never run, and carry the reason', async () => {
    const { id, socket } = await openSession({ max_steps: 1 });
    provider.rounds = greedyRounds(6);
    const before = provider.requests.length;
    socket.send({ type: 'user_message', payload: { text: 'look everything up' } });
    const done = await socket.nextOfType('done');
    expect(tools.runs).toEqual([{ tool: 'lookup', input: { word: 'w0' } }]);
    // Asked twice: with tools, then without them; what the second answer asked for was refused, and the turn ended.
    expect(provider.requests.slice(before).map((call) => (call.tools ?? []).length > 0)).toEqual([true, false]);
    const ends = socket.frames.filter((frame) => frame.type === 'tool_end').map((frame) => [frame.payload.tool_call_id, frame.payload.error]);
    expect(ends).toEqual([
      ['g0', null],
      ['g1', expect.stringMatching(/tool-round limit \(1\)/)],
    ]);
    expect(done.payload).toMatchObject({ tool_calls: 2, text: 'Round 0. Round 1. ' });
    const rounds = (await history(id)).filter((message) => message.role === 'assistant' && message.tool_calls.length > 0);
    expect(rounds.map((message) => message.tool_calls.map((stored: any) => [stored.tool_call_id, stored.error]))).toEqual([
      [['g0', null]],
      [['g1', expect.stringMatching(/tool-round limit \(1\)/)]],
    ]);
    socket.close();
  });

  it('the default cap (agent.max_tool_rounds, 3 here) holds against a model that never stops calling tools', async () => {
    const { socket } = await openSession();
    provider.rounds = greedyRounds(12);
    socket.send({ type: 'user_message', payload: { text: 'and again' } });
    await socket.nextOfType('done');
    expect(tools.runs.map((run) => run.input.word)).toEqual(['w0', 'w1', 'w2']);
    expect(socket.frames.filter((frame) => frame.type === 'tool_end' && frame.payload.error !== null)).toHaveLength(1);
    socket.close();
  });

  it('counts every tool round of the turn: a think turn’s research and its answer share one cap', async () => {
    const { socket } = await openSession({ max_steps: 2 });
    provider.rounds = [
      { text: ['Needs facts.\nNEEDS_WEB: yes'] }, // analysis
      ...greedyRounds(2, 'web_lookup', 'query'), // research: both rounds of the turn
      { text: ['Found.'] },
      { text: ['Reasoned.'] }, // deep thinking
      ...greedyRounds(3), // the answer asks for more tools: none may run
      { text: ['Answer.'] },
    ];
    socket.send({ type: 'user_message', payload: { text: 'look up the latest release', mode: 'think' } });
    await socket.nextOfType('done');
    expect(tools.runs.map((run) => run.tool)).toEqual(['web_lookup', 'web_lookup']);
    socket.close();
  });
});

describe('a cancel during a confirmation', () => {
  for (const how of ['the confirmation answered cancel', 'a cancel frame'] as const) {
    it(`closes the open call with tool_end CANCELLED before the cancel's frames, and stores that reason (${how})`, async () => {
      const { id, socket } = await openSession();
      provider.rounds = [{ text: ['Saving. '], calls: [{ id: 'n1', name: 'save_note', arguments: '{"text":"remember"}' }] }, { text: ['Saved.'] }];
      socket.send({ type: 'user_message', payload: { text: 'save it' } });
      const requested = await socket.nextOfType('tool_confirm_request');
      if (how === 'a cancel frame') socket.send({ type: 'cancel', payload: {} });
      else socket.send({ type: 'tool_confirm', payload: { confirmation_id: requested.payload.confirmation_id, action: 'cancel' } });
      const cancelled = await socket.next((frame) => frame.type === 'error' && frame.payload.code === 'CANCELLED');
      const turn = socket.frames.filter((frame) => frame.seq > requested.seq && frame.seq <= cancelled.seq);
      expect(turn.map((frame) => [frame.type, frame.payload.state ?? frame.payload.error ?? frame.payload.code])).toEqual([
        ['tool_end', 'CANCELLED'],
        ['agent_state', 'idle'],
        ['error', 'CANCELLED'],
      ]);
      expect(turn[0].payload).toEqual({
        tool_name: 'save_note',
        tool_call_id: 'n1',
        duration_ms: expect.any(Number),
        error: 'CANCELLED',
        turn_id: requested.payload.turn_id,
      });
      expect(tools.runs).toEqual([]);
      // The history says the call did not run, and why; its result follows it for the model's next turn.
      const messages = await history(id);
      const round = messages.find((message) => message.role === 'assistant' && message.tool_calls.length > 0);
      expect(round.tool_calls).toEqual([expect.objectContaining({ tool_call_id: 'n1', tool_name: 'save_note', error: 'CANCELLED' })]);
      expect(messages[messages.indexOf(round) + 1]).toMatchObject({ role: 'tool' });
      socket.close();
    });
  }
});
