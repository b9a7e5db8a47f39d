import { ScriptedProvider } from '../fakes/scripted-provider';
import { request } from '../helpers/http';
import { startTestHub, type TestHub } from '../helpers/hub';
import { removeTempDirs } from '../helpers/temp-dir';

// A tool's error message reaches the model, the tool_end frame and the stored history: it names the
// workspace-relative path the model gave, never the hub's data directory.

let hub: TestHub;
const provider = new ScriptedProvider();

beforeAll(async () => {
  hub = await startTestHub({ provider });
});

afterAll(async () => {
  await hub.stop();
  removeTempDirs();
});

it('write_file errors from the file system (ENAMETOOLONG) show only the workspace-relative path', async () => {
  const { api, dataDir } = hub;
  const { token, sessionId, socket } = await hub.sessionSocket('root');
  const auth = { authorization: `Bearer ${token}` };
  const longFile = `${'x'.repeat(300)}.txt`;
  const longDirectory = `${'d'.repeat(300)}/inner.txt`;
  provider.rounds = [
    {
      calls: [
        { id: 'w1', name: 'write_file', arguments: JSON.stringify({ path: longFile, content: 'a' }) },
        { id: 'w2', name: 'write_file', arguments: JSON.stringify({ path: longDirectory, content: 'b' }) },
      ],
    },
    { text: ['Both failed.'] },
  ];
  socket.send({ type: 'user_message', payload: { text: 'save two files', mode: 'normal' } });
  // Parallel calls: each asks on its own.
  for (const index of [0, 1]) {
    await socket.next(() => socket.frames.filter((f) => f.type === 'tool_confirm_request').length > index);
    const confirm = socket.frames.filter((f) => f.type === 'tool_confirm_request')[index];
    socket.send({ type: 'tool_confirm', payload: { confirmation_id: confirm.payload.confirmation_id, action: 'allow' } });
  }
  await socket.nextOfType('done');
  socket.close();

  const errors = Object.fromEntries(socket.frames.filter((f) => f.type === 'tool_end').map((f) => [f.payload.tool_call_id, f.payload.error]));
  expect(errors).toEqual({
    w1: `"${longFile}" could not be written: a file or directory name in it is too long (at most 255 bytes each).`,
    w2: `"${longDirectory}" could not be written: a file or directory name in it is too long (at most 255 bytes each).`,
  });
  // What the model was told, what the history stores, what the socket carried: no absolute path.
  const toModel = provider.requests
    .at(-1)!
    .messages.filter((m) => m.role === 'tool')
    .map((m) => m.content);
  const history = JSON.stringify((await request(`${api}/sessions/${sessionId}/messages?limit=100`, { headers: auth })).body.data);
  for (const text of [...toModel, history, JSON.stringify(socket.frames)]) {
    expect(text).not.toContain(dataDir);
    expect(text).not.toMatch(/ENAMETOOLONG|open '\//);
  }
  expect(toModel.join('\n')).toContain(`"${longFile}" could not be written`);
});
