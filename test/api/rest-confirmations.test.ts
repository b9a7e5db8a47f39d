import path from 'node:path';
import { writeFileSync } from 'node:fs';
import { startService, type RunningService } from '../../src/main';
import { ScriptedProvider } from '../fakes/scripted-provider';
import { TestTools } from '../fakes/test-tools';
import { GENEROUS_RATE_LIMITS } from '../helpers/auth-service';
import { testEnv } from '../helpers/env';
import { jsonBody, request } from '../helpers/http';
import { LogCapture } from '../helpers/log-capture';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir';
import { registerUser, type TestUser } from '../helpers/users';

/**
 * A client with no socket answers a confirmation over REST (decisions.md §8): `?sync=true` no longer
 * waits on a question nobody can answer.
 */
let service: RunningService;
let api: string;
let ann: TestUser;
let bob: TestUser;
const provider = new ScriptedProvider();
const tools = new TestTools();

beforeAll(async () => {
  const cwd = makeTempDir();
  writeFileSync(path.join(cwd, 'config.yaml'), 'agent:\n  default_tools: [lookup, save_note]\n');
  service = await startService({ env: testEnv(path.join(cwd, 'data'), GENEROUS_RATE_LIMITS), cwd, logDestination: new LogCapture(), provider, tools });
  api = `http://127.0.0.1:${service.port}/api/v1`;
  ann = await registerUser(api, 'ann');
  bob = await registerUser(api, 'bob');
});

afterAll(async () => {
  await service.stop();
  removeTempDirs();
});

const as = (user: TestUser) => ({ authorization: `Bearer ${user.token}` });
const saveNote = (id: string) => ({ calls: [{ id, name: 'save_note', arguments: JSON.stringify({ text: 'remember this' }) }] });

async function waitForPending(sessionId: string): Promise<any> {
  for (let attempt = 0; attempt < 200; attempt += 1) {
    const session = (await request(`${api}/sessions/${sessionId}`, { headers: as(ann) })).body.data;
    if (session.pending_confirmation) return session.pending_confirmation;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error('the turn never asked for a confirmation');
}

async function startConfirmingTurn() {
  const id = (await request(`${api}/sessions`, jsonBody({}, as(ann)))).body.data.id;
  provider.rounds = [saveNote(`n-${id.slice(0, 8)}`), { text: ['Saved.'] }];
  const answer = request(`${api}/sessions/${id}/messages?sync=true`, jsonBody({ text: 'save it' }, as(ann)));
  const pending = await waitForPending(id);
  return { id, answer, pending };
}

describe('POST /sessions/{id}/confirmations/{confirmation_id}', () => {
  it('answers the pending confirmation: allow runs the tool and the sync request gets its done', async () => {
    const { id, answer, pending } = await startConfirmingTurn();
    expect(pending).toEqual({
      confirmation_id: expect.any(String),
      tool: 'save_note',
      parameters: { text: 'remember this' },
      message: expect.stringContaining('save_note'),
    });
    const confirmed = await request(`${api}/sessions/${id}/confirmations/${pending.confirmation_id}`, jsonBody({ action: 'allow' }, as(ann)));
    expect(confirmed.status).toBe(202);
    expect(confirmed.body.data).toEqual({ confirmation_id: pending.confirmation_id, action: 'allow' });
    const done = await answer;
    expect(done.status).toBe(200);
    expect(done.body.data).toMatchObject({ text: 'Saved.', tool_calls: 1 });
    expect(tools.runs).toContainEqual({ tool: 'save_note', input: { text: 'remember this' } });
    // Answered once: the same id is no longer pending.
    const again = await request(`${api}/sessions/${id}/confirmations/${pending.confirmation_id}`, jsonBody({ action: 'allow' }, as(ann)));
    expect(again.status).toBe(404);
    expect(again.body.error.code).toBe('CONFIRMATION_NOT_FOUND');
    expect((await request(`${api}/sessions/${id}`, { headers: as(ann) })).body.data.pending_confirmation).toBeNull();
  });

  it('cancel ends the turn, and the sync request answers 409 CANCELLED', async () => {
    const { id, answer, pending } = await startConfirmingTurn();
    await request(`${api}/sessions/${id}/confirmations/${pending.confirmation_id}`, jsonBody({ action: 'cancel' }, as(ann)));
    const ended = await answer;
    expect(ended.status).toBe(409);
    expect(ended.body.error.code).toBe('CANCELLED');
  });

  it('refuses a wrong id, an unknown action and another user, without touching the turn', async () => {
    const { id, answer, pending } = await startConfirmingTurn();
    const wrongId = await request(`${api}/sessions/${id}/confirmations/not-the-one`, jsonBody({ action: 'allow' }, as(ann)));
    expect([wrongId.status, wrongId.body.error.code]).toEqual([404, 'CONFIRMATION_NOT_FOUND']);
    const badAction = await request(`${api}/sessions/${id}/confirmations/${pending.confirmation_id}`, jsonBody({ action: 'maybe' }, as(ann)));
    expect([badAction.status, badAction.body.error.code]).toEqual([422, 'VALIDATION_ERROR']);
    expect(Object.keys(badAction.body.error.details.fields)).toEqual(['action']);
    const otherUser = await request(`${api}/sessions/${id}/confirmations/${pending.confirmation_id}`, jsonBody({ action: 'allow' }, as(bob)));
    expect([otherUser.status, otherUser.body.error.code]).toEqual([404, 'SESSION_NOT_FOUND']);
    // Still waiting for its owner's answer.
    expect((await request(`${api}/sessions/${id}`, { headers: as(ann) })).body.data.pending_confirmation.confirmation_id).toBe(pending.confirmation_id);
    await request(`${api}/sessions/${id}/confirmations/${pending.confirmation_id}`, jsonBody({ action: 'deny' }, as(ann)));
    expect((await answer).status).toBe(200);
  });
});
