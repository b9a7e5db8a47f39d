import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describeToolResults, plannedCall } from '../../src/agent/providers/builtin-tools';
import type { ToolSpec } from '../../src/agent/provider';
import { startTestHub, type TestHub } from '../helpers/hub';
import { removeTempDirs } from '../helpers/temp-dir';

const spec = (name: string): ToolSpec => ({ name, description: '', parameters: {} });
const ALL = ['write_file', 'current_time', 'calculator', 'knowledge_search'].map(spec);
const plan = (text: string, tools = ALL) => plannedCall([{ role: 'user', content: text }], tools)?.call ?? null;
const input = (text: string) => JSON.parse(plan(text)?.arguments ?? 'null');

describe('the built-in model calls built-in tools on plain requests', () => {
  it('recognises the tour’s requests', () => {
    expect(plan('write a file notes.txt containing the meeting notes')).toMatchObject({ name: 'write_file' });
    expect(input('write a file notes.txt containing the meeting notes')).toEqual({ path: 'notes.txt', content: 'the meeting notes' });
    expect(input('Please create a file called plan/q3.md with "ship it"')).toEqual({ path: 'plan/q3.md', content: 'ship it' });
    expect(input('what time is it in Tokyo?')).toEqual({ timezone: 'Asia/Tokyo' });
    expect(input('What is the current time in New York')).toEqual({ timezone: 'America/New_York' });
    expect(input('what time is it?')).toEqual({});
    expect(input('calculate (1200 * 1.07^3) / 12')).toEqual({ expression: '(1200 * 1.07^3) / 12' });
    expect(input('search the handbook for rollback')).toEqual({ query: 'rollback' });
  });

  it('answers plainly otherwise, and never calls a tool the session does not offer', () => {
    expect(plan('tell me about deployments')).toBeNull();
    expect(plan('what is love?')).toBeNull();
    expect(plan('write a file notes.txt containing x', [spec('calculator')])).toBeNull();
    expect(plannedCall([{ role: 'user', content: 'calculate 2+2' }], undefined)).toBeNull();
  });

  it('after the tool round it reports what the tools returned, errors included', () => {
    const said = describeToolResults([
      { role: 'user', content: 'calculate 2+2' },
      { role: 'assistant', content: '', toolCalls: [{ id: 'c', name: 'calculator', arguments: '{}' }] },
      { role: 'tool', toolCallId: 'c', name: 'calculator', content: '{"result":4}' },
    ]);
    expect(said).toContain('calculator answered: {"result":4}');
    expect(describeToolResults([{ role: 'tool', toolCallId: 'w', name: 'write_file', content: 'Error: The user denied this call.' }])).toContain(
      'write_file did not run: The user denied this call.',
    );
    expect(describeToolResults([{ role: 'user', content: 'hi' }])).toBeNull();
  });
});

describe('the tour with no model configured (a real hub, the built-in provider)', () => {
  let hub: TestHub;

  beforeAll(async () => {
    hub = await startTestHub();
  });

  afterAll(async () => {
    await hub.stop();
    removeTempDirs();
  });

  it('"write a file … containing …" asks for confirmation, writes the file when allowed, and streams every frame', async () => {
    const { socket } = await hub.sessionSocket('newcomer');
    socket.send({ type: 'user_message', payload: { text: 'write a file notes.txt containing the meeting notes', mode: 'normal' } });
    const asked = await socket.nextOfType('tool_confirm_request');
    expect(asked.payload).toMatchObject({ tool: 'write_file', parameters: { path: 'notes.txt', content: 'the meeting notes' } });
    socket.send({ type: 'tool_confirm', payload: { confirmation_id: asked.payload.confirmation_id, action: 'allow' } });
    const done = await socket.nextOfType('done');
    const types = socket.frames.map((frame) => frame.type);
    expect(types).toEqual(expect.arrayContaining(['tool_start', 'tool_confirm_request', 'tool_end', 'token', 'done']));
    expect(socket.frames.find((frame) => frame.type === 'tool_end').payload).toMatchObject({ tool_name: 'write_file', error: null });
    expect(done.payload).toMatchObject({ tool_calls: 1, text: expect.stringContaining('write_file answered') });
    const file = path.join(hub.dataDir, 'workspace', 'notes.txt');
    expect(existsSync(file) && readFileSync(file, 'utf8')).toBe('the meeting notes');
    socket.close();
  });
});
