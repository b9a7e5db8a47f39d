import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { startService } from '../../../src/main';
import { ScriptedProvider } from '../../fakes/scripted-provider';
import { TestTools } from '../../fakes/test-tools';
import { GENEROUS_RATE_LIMITS } from '../../helpers/auth-service';
import { testEnv } from '../../helpers/env';
import { jsonBody, request } from '../../helpers/http';
import { LogCapture } from '../../helpers/log-capture';
import { makeTempDir } from '../../helpers/temp-dir';
import { registerUser } from '../../helpers/users';
import { openSocket, type TestSocket } from '../../helpers/ws-client';
import type { ChannelUnderTest, Conversation } from './channel-under-test';

/**
 * The web channel: messages in through the REST messages endpoint (with an `Idempotency-Key`, so a
 * client's retry is a redelivery), the turn watched on the session WebSocket as a browser would.
 */
export async function startWeb(): Promise<ChannelUnderTest> {
  const provider = new ScriptedProvider();
  const tools = new TestTools();
  const cwd = makeTempDir();
  writeFileSync(path.join(cwd, 'config.yaml'), 'agent:\n  default_tools: [lookup, save_note]\n');
  const service = await startService({ env: testEnv(path.join(cwd, 'data'), GENEROUS_RATE_LIMITS), cwd, logDestination: new LogCapture(), provider, tools });
  const api = `http://127.0.0.1:${service.port}/api/v1`;
  const adminToken = (await registerUser(api, 'root')).token;
  const visitor = await registerUser(api, 'visitor');
  const auth = { authorization: `Bearer ${visitor.token}` };
  const sockets: TestSocket[] = [];

  const conversation = async (): Promise<Conversation> => {
    const sessionId = (await request(`${api}/sessions`, jsonBody({}, auth))).body.data.id as string;
    const socket = await openSocket(`ws://127.0.0.1:${service.port}/ws/v1/sessions/${sessionId}`, { headers: auth });
    sockets.push(socket);
    await socket.nextOfType('agent_state');
    let turnId = '';
    const ofTurn = (frame: any) => frame.payload?.turn_id === turnId;
    const assembled = (id: string) =>
      socket.frames
        .filter((frame) => frame.type === 'token' && frame.payload.turn_id === id)
        .map((frame) => frame.payload.text)
        .join('');
    const turnIds = () => [...new Set(socket.frames.map((frame) => frame.payload?.turn_id).filter(Boolean))] as string[];
    return {
      expectedKey: null,
      expectedBinding: 'web',
      sessionId: async () => sessionId,
      send: async (text) => {
        const key = randomUUID();
        const post = () => request(`${api}/sessions/${sessionId}/messages`, jsonBody({ text }, { ...auth, 'idempotency-key': key }));
        const accepted = await post();
        if (accepted.status !== 202) throw new Error(`message refused: ${accepted.status} ${JSON.stringify(accepted.body.error)}`);
        turnId = accepted.body.data.id;
        // A client that did not see the 202 (a timeout, a dropped connection) sends it again.
        return { redeliver: async () => void (await post()) };
      },
      showsWorking: async (prefix) => {
        await socket.next((frame) => frame.type === 'token' && ofTurn(frame) && assembled(turnId).startsWith(prefix));
        if (socket.frames.some((frame) => frame.type === 'done' && ofTurn(frame))) throw new Error('the turn had ended: nothing was partial');
      },
      showsAnswer: async (text) => {
        const done = await socket.next((frame) => frame.type === 'done' && ofTurn(frame), 10_000);
        if (done.payload.text !== text || assembled(turnId) !== text)
          throw new Error(`answer "${done.payload.text}", tokens "${assembled(turnId)}"; expected "${text}"`);
      },
      confirmation: async () => {
        const asked = await socket.next((frame) => frame.type === 'tool_confirm_request' && ofTurn(frame), 10_000);
        return {
          offered: null, // the protocol's frame lists no actions: a client offers the spec's six
          answer: async (action) => socket.send({ type: 'tool_confirm', payload: { confirmation_id: asked.payload.confirmation_id, action } }),
        };
      },
      failureShown: async () => {
        const error = await socket.next((frame) => frame.type === 'error' && ofTurn(frame), 10_000);
        await socket.next((frame) => frame.type === 'agent_state' && frame.payload.state === 'idle' && frame.seq > error.seq);
        return error.payload.message;
      },
      shown: () => [
        ...turnIds().map(assembled),
        ...socket.frames.filter((frame) => frame.type === 'error' || frame.type === 'tool_confirm_request').map((frame) => frame.payload.message),
      ],
    };
  };

  return {
    name: 'web',
    provider,
    tools,
    api,
    adminToken,
    conversation,
    stop: async () => {
      for (const socket of sockets) socket.close();
      await service.stop();
    },
  };
}
