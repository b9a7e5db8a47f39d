import { startProfileHub, testProfiles, PROFILE_START_TIMEOUT_MS, type ProfileHub } from '../helpers/hub-profiles';
import { removeTempDirs } from '../helpers/temp-dir';
import { expectGapless, framesOf, ProtocolClient, restTurn, turnEnd, CASE_TIMEOUT_MS } from './protocol-client';

/**
 * Sessions and messages over REST and WebSocket, the same cases on both profiles (embedded: one
 * process on SQLite; scaled: REST on API process A, sockets on API process B, turns on a worker
 * process, PostgreSQL and Redis). The built-in model answers; its `write_file` asks for a
 * confirmation, which holds a turn running for as long as a case needs (no timing).
 */
const WRITE = 'write a file notes.txt containing the meeting notes';

jest.setTimeout(CASE_TIMEOUT_MS);

describe.each(testProfiles())('sessions and messages (%s)', (profile) => {
  let hub: ProfileHub;
  let alice: ProtocolClient;
  let bob: ProtocolClient;

  beforeAll(async () => {
    hub = await startProfileHub(profile);
    alice = await ProtocolClient.register(hub, 'alice'); // the first user: admin
    bob = await ProtocolClient.register(hub, 'bob');
  }, PROFILE_START_TIMEOUT_MS);

  afterAll(async () => {
    await hub?.stop();
    removeTempDirs();
  });

  it('creates sessions with and without a config, in any order (PostgreSQL refused the second shape with a 500)', async () => {
    const shapes = [
      {},
      { config: { memory_mode: 'reasoning' } },
      { name: 'tuned', config: { system_prompt: 'Be brief.', max_steps: 3, context_compression: false } },
      {},
      { config: { memory_mode: 'conversation' } },
    ];
    for (const body of shapes) {
      const created = await bob.post('/sessions', body);
      expect(created.status).toBe(201);
      expect(created.body.data).toMatchObject({ owner_id: bob.user.id, channel: 'web', config: (body as { config?: object }).config ?? {}, archived_at: null });
    }
    const reasoning = (await bob.post('/sessions', { config: { memory_mode: 'reasoning' } })).body.data.id;
    expect((await bob.onOther('GET', `/sessions/${reasoning}/memory`)).body.data.mode).toBe('reasoning');
  });

  it('renames, archives and restores; what one process changes holds on the other; strangers get 404', async () => {
    const sessionId = await bob.newSession({ name: 'first name' });
    expect((await bob.patch(`/sessions/${sessionId}`, { name: 'second name' })).status).toBe(200);
    expect((await bob.onOther('GET', `/sessions/${sessionId}`)).body.data.name).toBe('second name');
    expect((await bob.get('/sessions')).body.data.items.map((item: { id: string }) => item.id)).toContain(sessionId);
    expect((await alice.get(`/sessions/${sessionId}`)).status).toBe(200); // admins see every session
    const carol = await ProtocolClient.register(hub, 'carol');
    expect((await carol.get(`/sessions/${sessionId}`)).status).toBe(404);
    await expect((await carol.rawSocket(sessionId)).closed).resolves.toMatchObject({ code: 4003 });

    expect((await bob.delete(`/sessions/${sessionId}`)).status).toBe(200);
    const refused = await bob.onOther('POST', `/sessions/${sessionId}/messages`, { text: 'still there?' });
    expect(refused.status).toBe(409);
    expect(await (await bob.rawSocket(sessionId)).closed).toMatchObject({ code: 4004 });
    expect((await bob.get('/sessions')).body.data.items.map((item: { id: string }) => item.id)).not.toContain(sessionId);
    expect((await bob.post(`/sessions/${sessionId}/restore`)).status).toBe(200);
    const socket = await bob.socket(sessionId);
    const [, done] = await restTurn(bob, socket, sessionId, 'back again');
    expect(done.type).toBe('done');
    socket.close();
  });

  it('a REST message streams to a socket on the other process in order and gapless; ?sync=true answers the done payload', async () => {
    const sessionId = await bob.newSession();
    const socket = await bob.socket(sessionId);
    const [turnId, done] = await restTurn(bob, socket, sessionId, 'Tell me about the quarterly roadmap');
    const states = framesOf(socket, turnId)
      .filter((frame) => frame.type === 'agent_state')
      .map((frame) => frame.payload.state);
    expect(states[0]).toBe('thinking');
    expect(states.slice(-1)).toEqual(['done']);
    const streamed = framesOf(socket, turnId)
      .filter((frame) => frame.type === 'token')
      .map((frame) => frame.payload.text)
      .join('');
    expect(streamed).toBe(done.payload.text);
    expect(done.payload.text).toContain('quarterly roadmap');

    const synced = await bob.post(`/sessions/${sessionId}/messages?sync=true`, { content: 'And the budget?' });
    expect(synced.status).toBe(200);
    expect(synced.body.data).toMatchObject({ tool_calls: 0, text: expect.stringContaining('budget') });
    const history = (await bob.onOther('GET', `/sessions/${sessionId}/messages`)).body.data.items;
    expect(history.map((item: { role: string }) => item.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
    expect(history[1]).toMatchObject({ id: done.payload.message_id, content: done.payload.text });
    expect(history[3]).toMatchObject({ id: synced.body.data.message_id, content: synced.body.data.text });
    await socket.next((frame) => frame.type === 'done' && frame.payload.message_id === synced.body.data.message_id);
    expectGapless(socket);
    socket.close();
  });

  it('a turn waiting for a confirmation: a second message is refused on REST and on the socket; cancel ends it without done', async () => {
    const sessionId = await bob.newSession();
    const socket = await bob.socket(sessionId);
    socket.send({ type: 'user_message', payload: { text: WRITE, mode: 'normal' } });
    const asked = await socket.nextOfType('tool_confirm_request', -Infinity, 30_000);
    const turnId = asked.payload.turn_id as string;
    expect(asked.payload).toMatchObject({ tool: 'write_file', parameters: { path: 'notes.txt', content: 'the meeting notes' } });

    const rest = await bob.post(`/sessions/${sessionId}/messages`, { text: 'are you there?' });
    expect(rest.status).toBe(409);
    expect(rest.body.error.code).toBe('TURN_IN_PROGRESS');
    socket.send({ type: 'user_message', payload: { text: 'hello?', mode: 'normal' } });
    expect((await socket.next((frame) => frame.type === 'error' && frame.payload.code === 'TURN_IN_PROGRESS')).payload.code).toBe('TURN_IN_PROGRESS');

    socket.send({ type: 'cancel', payload: {} });
    const end = await turnEnd(socket, turnId);
    expect(end.payload.code).toBe('CANCELLED');
    const idle = socket.frames.filter((frame) => frame.type === 'agent_state' && frame.payload.state === 'idle' && frame.seq < end.seq).at(-1);
    expect(idle.seq).toBe(end.seq - 1);
    expect(framesOf(socket, turnId).filter((frame) => frame.type === 'done')).toEqual([]);
    // The session takes the next message at once.
    const [, next] = await restTurn(bob, socket, sessionId, 'next question');
    expect(next.type).toBe('done');
    expectGapless(socket);
    socket.close();
  });

  it('a socket that drops mid-turn reconnects to the other process with last_seq: the missed frames, gapless, and the pending confirmation', async () => {
    const sessionId = await bob.newSession();
    const first = await bob.socket(sessionId);
    const sent = await bob.post(`/sessions/${sessionId}/messages`, { text: WRITE });
    const turnId = sent.body.data.id as string;
    const asked = await first.next((frame) => frame.type === 'tool_confirm_request' && frame.payload.turn_id === turnId, 30_000);
    const lastSeen = first.frames.at(-1).seq as number;
    first.close();
    await first.closed;

    const second = await bob.socket(sessionId, `?last_seq=${lastSeen}`, 0);
    const again = await second.next((frame) => frame.type === 'tool_confirm_request');
    expect(again.payload.confirmation_id).toBe(asked.payload.confirmation_id);
    second.send({ type: 'tool_confirm', payload: { confirmation_id: again.payload.confirmation_id, action: 'allow' } });
    const done = await turnEnd(second, turnId);
    expect(done.type).toBe('done');
    const toolEnd = second.frames.find((frame) => frame.type === 'tool_end' && frame.payload.turn_id === turnId);
    expect(toolEnd.payload).toMatchObject({ tool_name: 'write_file', error: null });
    const seqs = [...first.frames, ...second.frames].map((frame) => frame.seq);
    for (let index = 1; index < seqs.length; index += 1) expect(seqs[index]).toBe(seqs[index - 1] + 1);
    second.close();
  });

  it('an Idempotency-Key retried on the other process stores one message and starts one turn', async () => {
    const sessionId = await bob.newSession();
    const socket = await bob.socket(sessionId);
    const headers = { 'idempotency-key': 'retry-me-1' };
    const first = await bob.call('POST', `/sessions/${sessionId}/messages`, { text: 'only once please' }, { headers });
    const second = await bob.call('POST', `/sessions/${sessionId}/messages`, { text: 'only once please' }, { headers, process: 1 });
    expect(first.status).toBe(202);
    expect(second.status).toBe(202);
    expect(second.body.data.id).toBe(first.body.data.id);
    await turnEnd(socket, first.body.data.id);
    const history = (await bob.get(`/sessions/${sessionId}/messages`)).body.data.items;
    expect(history.map((item: { role: string }) => item.role)).toEqual(['user', 'assistant']);
    socket.close();
  });

  it('keeps history oldest first with a cursor and clears it keeping the newest', async () => {
    const sessionId = await bob.newSession();
    for (const text of ['one', 'two', 'three']) expect((await bob.post(`/sessions/${sessionId}/messages?sync=true`, { text })).status).toBe(200);
    const page = await bob.get(`/sessions/${sessionId}/messages?limit=4`);
    expect(page.body.data.items.map((item: { content: string; role: string }) => (item.role === 'user' ? item.content : 'answer'))).toEqual([
      'one',
      'answer',
      'two',
      'answer',
    ]);
    expect(page.body.data).toMatchObject({ has_more: true, total: 6 });
    const rest = await bob.onOther('GET', `/sessions/${sessionId}/messages?limit=4&cursor=${encodeURIComponent(page.body.data.next_cursor)}`);
    expect(rest.body.data.items.map((item: { content: string; role: string }) => (item.role === 'user' ? item.content : 'answer'))).toEqual([
      'three',
      'answer',
    ]);
    expect((await bob.delete(`/sessions/${sessionId}/messages`, { keep_last: 2 })).status).toBe(200);
    expect((await bob.get(`/sessions/${sessionId}/messages`)).body.data.items.map((item: { content: string }) => item.content)[0]).toBe('three');
  });
});
