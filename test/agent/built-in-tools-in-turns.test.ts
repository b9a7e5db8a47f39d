import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { ScriptedProvider } from '../fakes/scripted-provider';
import { startTestHub, type TestHub } from '../helpers/hub';
import { removeTempDirs } from '../helpers/temp-dir';

/** The hub's own tool registry (no test tools) in real turns: the composition root wires it. */
let hub: TestHub;
const provider = new ScriptedProvider();

beforeAll(async () => {
  hub = await startTestHub({ provider });
});

afterAll(async () => {
  await hub.stop();
  removeTempDirs();
});

it('runs calculator, and write_file into the workspace only after a human allows it', async () => {
  const { dataDir } = hub;
  const { socket } = await hub.sessionSocket('root');
  provider.rounds = [
    {
      calls: [
        { id: 'c1', name: 'calculator', arguments: '{"expression":"2+3*4"}' },
        { id: 'w1', name: 'write_file', arguments: '{"path":"notes/answer.txt","content":"14"}' },
      ],
    },
    { text: ['Saved 14.'] },
  ];
  socket.send({ type: 'user_message', payload: { text: 'compute and save', mode: 'normal' } });
  const confirm = await socket.nextOfType('tool_confirm_request');
  expect(confirm.payload.tool).toBe('write_file');
  expect(Object.keys(confirm.payload.parameters)).toEqual(['content', 'path']); // shortest value first
  expect(existsSync(path.join(dataDir, 'workspace/notes/answer.txt'))).toBe(false);
  socket.send({ type: 'tool_confirm', payload: { confirmation_id: confirm.payload.confirmation_id, action: 'allow' } });
  await socket.nextOfType('done');
  expect(socket.frames.filter((f) => f.type === 'tool_end').map((f) => [f.payload.tool_call_id, f.payload.error])).toEqual(
    expect.arrayContaining([
      ['c1', null],
      ['w1', null],
    ]),
  );
  const results = provider.requests.at(-1)!.messages.filter((m) => m.role === 'tool');
  expect(results.find((m) => m.role === 'tool' && m.toolCallId === 'c1')!.content).toContain('14');
  expect(readFileSync(path.join(dataDir, 'workspace/notes/answer.txt'), 'utf8')).toBe('14');
  socket.close();
});
