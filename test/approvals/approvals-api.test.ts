import path from 'node:path';
import { writeFileSync } from 'node:fs';
import { startService, type RunningService } from '../../src/main';
import { ScriptedProvider } from '../fakes/scripted-provider';
import { TestTools } from '../fakes/test-tools';
import { auditRows } from '../helpers/audit';
import { GENEROUS_RATE_LIMITS } from '../helpers/auth-service';
import { testEnv } from '../helpers/env';
import { jsonBody, request } from '../helpers/http';
import { LogCapture } from '../helpers/log-capture';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir';
import { registerUser, type TestUser } from '../helpers/users';

/**
 * Approvals by the right people (issue 30) through the API: a workflow's policy decides who approves
 * a tool instead of the requester; quorum of distinct approvers, no self-approval, a single deny,
 * timeouts (deny, escalate), audit rows naming the policy.
 */
let service: RunningService;
let api: string;
let admin: TestUser;
let ann: TestUser;
let bob: TestUser;
let carol: TestUser;
let dave: TestUser;
const provider = new ScriptedProvider();
const tools = new TestTools();

const OPS_WORKFLOW = {
  name: 'ops',
  tool_list: 'lookup,save_note',
  approvals: [
    { tools: ['save_*'], approvers: { users: ['ann', 'bob', 'carol'] }, quorum: 2 },
    { tools: ['look?p'], approvers: { users: ['bob'] }, timeout_s: 1, on_timeout: 'escalate', escalate_to: { users: ['carol'] } },
  ],
};

beforeAll(async () => {
  const cwd = makeTempDir();
  writeFileSync(path.join(cwd, 'config.yaml'), 'agent:\n  default_tools: [lookup, save_note]\n');
  service = await startService({ env: testEnv(path.join(cwd, 'data'), GENEROUS_RATE_LIMITS), cwd, logDestination: new LogCapture(), provider, tools });
  api = `http://127.0.0.1:${service.port}/api/v1`;
  admin = await registerUser(api, 'admin');
  [ann, bob, carol, dave] = [await registerUser(api, 'ann'), await registerUser(api, 'bob'), await registerUser(api, 'carol'), await registerUser(api, 'dave')];
  const created = await request(`${api}/assistant/workflows`, jsonBody(OPS_WORKFLOW, as(admin)));
  expect(created.status).toBe(201);
});

afterAll(async () => {
  await service.stop();
  removeTempDirs();
});

const as = (user: TestUser) => ({ authorization: `Bearer ${user.token}` });
const call = (name: string, input: Record<string, unknown>, id: string) => ({ calls: [{ id, name, arguments: JSON.stringify(input) }] });

async function waitForApproval(sessionId: string, approvals: number): Promise<any> {
  for (let attempt = 0; attempt < 400; attempt += 1) {
    const pending = (await request(`${api}/sessions/${sessionId}`, { headers: as(ann) })).body.data.pending_confirmation;
    if (pending?.approval && pending.approval.approvals === approvals) return pending;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`the turn never asked for an approval with ${approvals} counted`);
}

/** Ann asks the `ops` workflow for a call of `tool`; the sync request waits for the turn's done. */
async function annAsks(tool: string, input: Record<string, unknown>) {
  const id = (await request(`${api}/sessions`, jsonBody({}, as(ann)))).body.data.id;
  provider.rounds = [call(tool, input, `c-${id.slice(0, 8)}`), { text: ['Finished.'] }];
  const answer = request(`${api}/sessions/${id}/messages?sync=true`, jsonBody({ text: 'please', metadata: { workflow: 'ops' } }, as(ann)));
  const pending = await waitForApproval(id, 0);
  return { id, answer, pending };
}

const click = (user: TestUser, approvalId: string, action: string) => request(`${api}/approvals/${approvalId}`, jsonBody({ action }, as(user)));

describe('approval policies in the workflow', () => {
  it('are validated when saved (422 naming the field)', async () => {
    const bad = [
      { tools: ['x'], approvers: {} },
      { tools: ['x'], approvers: { users: ['a'] }, on_timeout: 'escalate' },
      { tools: ['x'], approvers: { users: ['a'] }, quorum: 2 },
      { tools: ['rm -rf'], approvers: { roles: ['admin'] } },
      { tools: ['x'], approvers: { slack_usergroup: 'not-a-group' } },
    ];
    for (const policy of bad) {
      const response = await request(`${api}/assistant/workflows`, jsonBody({ name: 'bad', approvals: [policy] }, as(admin)));
      expect(response.status).toBe(422);
      expect(Object.keys(response.body.error.details.fields).some((field) => field.startsWith('approvals.0'))).toBe(true);
    }
    const stored = (await request(`${api}/assistant/workflows/ops`, { headers: as(admin) })).body.data;
    expect(stored.approvals[0]).toEqual({
      ...OPS_WORKFLOW.approvals[0],
      self_approval: false,
      timeout_s: 900,
      on_timeout: 'deny',
      approvers: { users: ['ann', 'bob', 'carol'], roles: [], telegram_chat_admins: false },
    });
  });
});

describe('a tool under a policy', () => {
  it('needs a quorum of distinct approvers: the requester, a non-approver and a second click of the same approver do not count', async () => {
    const { id, answer, pending } = await annAsks('save_note', { text: 'deploy notes' });
    expect(pending.approval).toMatchObject({ quorum: 2, approvals: 0, approvers: '@ann, @bob, @carol' });
    expect(pending.message).toContain('Waiting for approval by @ann, @bob, @carol (0 of 2)');
    // The requester may not approve their own request, on either route.
    const own = await click(ann, pending.confirmation_id, 'allow');
    expect(own.status).toBe(403);
    expect(own.body.error).toMatchObject({ code: 'FORBIDDEN', message: expect.stringContaining('Your own request') });
    const ownSession = await request(`${api}/sessions/${id}/confirmations/${pending.confirmation_id}`, jsonBody({ action: 'allow' }, as(ann)));
    expect(ownSession.status).toBe(403);
    const stranger = await click(dave, pending.confirmation_id, 'allow');
    expect(stranger.status).toBe(403);
    expect(stranger.body.error.message).toContain('not among the approvers');
    // Bob counts once, however often he clicks.
    expect((await click(bob, pending.confirmation_id, 'allow')).body.data).toMatchObject({ counted: true, decided: null, progress: { approvals: 1 } });
    expect((await click(bob, pending.confirmation_id, 'allow')).body.data).toMatchObject({ counted: true, decided: null, progress: { approvals: 1 } });
    const progressed = await waitForApproval(id, 1);
    expect(progressed.approval.approved_by).toEqual(['bob']);
    expect(tools.runs.filter((run) => run.tool === 'save_note')).toHaveLength(0);
    // Carol sees it among her pending approvals; dave does not.
    const carolsList = (await request(`${api}/approvals?state=pending`, { headers: as(carol) })).body.data.items;
    expect(carolsList.map((item: { id: string }) => item.id)).toContain(pending.confirmation_id);
    expect((await request(`${api}/approvals`, { headers: as(dave) })).body.data.items).toEqual([]);
    const decided = await click(carol, pending.confirmation_id, 'allow');
    expect(decided.body.data).toMatchObject({ decided: 'allow', progress: { approvals: 2 } });
    const done = await answer;
    expect(done.body.data).toMatchObject({ text: 'Finished.', tool_calls: 1 });
    expect(tools.runs).toContainEqual({ tool: 'save_note', input: { text: 'deploy notes' } });
    expect((await click(carol, pending.confirmation_id, 'allow')).status).toBe(409);
    const rows = await auditRows(api, admin.token, { session_id: id }, 6, (row) => row.kind === 'approval.decided');
    const kinds = rows.map((row) => `${row.kind}:${row.action}`);
    expect(kinds).toEqual(
      expect.arrayContaining(['approval.requested:requested', 'approval.click:refused', 'approval.click:counted', 'approval.decided:approved']),
    );
    const decidedRow = rows.find((row) => row.kind === 'approval.decided')!;
    expect(decidedRow.details).toMatchObject({ approval_id: pending.confirmation_id, requester: ann.id, policy: { index: 0, tools: ['save_*'], quorum: 2 } });
    const counted = rows.filter((row) => row.kind === 'approval.click' && row.action === 'counted');
    expect(counted.map((row) => row.details.hub_user).sort()).toEqual(['bob', 'bob', 'carol']);
  });

  it('is denied by a single approver, and the model gets a denied call', async () => {
    const { id, answer, pending } = await annAsks('save_note', { text: 'never' });
    await click(bob, pending.confirmation_id, 'allow');
    expect((await click(carol, pending.confirmation_id, 'deny')).body.data).toMatchObject({ decided: 'deny' });
    expect((await answer).body.data).toMatchObject({ text: 'Finished.' });
    expect(tools.runs).not.toContainEqual({ tool: 'save_note', input: { text: 'never' } });
    const history = (await request(`${api}/sessions/${id}/messages`, { headers: as(ann) })).body.data.items;
    const round = history.find((message: { tool_calls: unknown[] }) => message.tool_calls.length > 0);
    expect(round.tool_calls[0].error).toBe('Not approved: an approver denied "save_note"; it did not run. Do without it, or explain why it is needed.');
  });

  it('escalates after its timeout to `escalate_to`, who approves', async () => {
    const { id, answer, pending } = await annAsks('lookup', { word: 'escalation' });
    expect(pending.approval).toMatchObject({ approvers: '@bob', escalated: false });
    let escalated: any = null;
    for (let attempt = 0; attempt < 200 && !escalated; attempt += 1) {
      const now = (await request(`${api}/sessions/${id}`, { headers: as(ann) })).body.data.pending_confirmation;
      if (now?.approval?.escalated) escalated = now;
      else await new Promise((resolve) => setTimeout(resolve, 25));
    }
    expect(escalated.approval).toMatchObject({ approvers: '@carol', escalated: true });
    expect((await click(bob, pending.confirmation_id, 'allow')).status).toBe(403);
    expect((await click(carol, pending.confirmation_id, 'allow')).body.data).toMatchObject({ decided: 'allow' });
    await answer;
    expect(tools.runs).toContainEqual({ tool: 'lookup', input: { word: 'escalation' } });
  });

  it('is denied when nobody approves in time (escalated once, then the second timeout denies)', async () => {
    const { id, answer, pending } = await annAsks('lookup', { word: 'silence' });
    expect((await answer).body.data).toMatchObject({ text: 'Finished.' });
    expect(tools.runs).not.toContainEqual({ tool: 'lookup', input: { word: 'silence' } });
    const rows = await auditRows(api, admin.token, { session_id: id, kind: 'approval.decided' }, 2);
    expect(rows.map((row) => `${row.actor.key}:${row.action}`).sort()).toEqual(['system:timeout:escalated', 'system:timeout:timed_out']);
    expect((await click(carol, pending.confirmation_id, 'allow')).status).toBe(409);
  });

  it('allows the tool for the rest of the session when every counted approver chose allow_all', async () => {
    const { id, answer, pending } = await annAsks('save_note', { text: 'one' });
    await click(bob, pending.confirmation_id, 'allow_all');
    await click(carol, pending.confirmation_id, 'allow_all');
    await answer;
    provider.rounds = [call('save_note', { text: 'two' }, `c2-${id.slice(0, 8)}`), { text: ['Again.'] }];
    const second = await request(`${api}/sessions/${id}/messages?sync=true`, jsonBody({ text: 'again', metadata: { workflow: 'ops' } }, as(ann)));
    expect(second.body.data).toMatchObject({ text: 'Again.' });
    expect(tools.runs).toContainEqual({ tool: 'save_note', input: { text: 'two' } });
  });

  it('a tool under no policy keeps the requester’s confirmation', async () => {
    const id = (await request(`${api}/sessions`, jsonBody({}, as(ann)))).body.data.id;
    provider.rounds = [call('save_note', { text: 'plain' }, `p-${id.slice(0, 8)}`), { text: ['Plain.'] }];
    const answer = request(`${api}/sessions/${id}/messages?sync=true`, jsonBody({ text: 'no workflow' }, as(ann)));
    let pending: any = null;
    for (let attempt = 0; attempt < 200 && !pending; attempt += 1) {
      pending = (await request(`${api}/sessions/${id}`, { headers: as(ann) })).body.data.pending_confirmation;
      if (!pending) await new Promise((resolve) => setTimeout(resolve, 25));
    }
    expect(pending.approval).toBeUndefined();
    expect((await request(`${api}/sessions/${id}/confirmations/${pending.confirmation_id}`, jsonBody({ action: 'allow' }, as(ann)))).status).toBe(202);
    expect((await answer).body.data).toMatchObject({ text: 'Plain.' });
  });

  it('answers 404 for an unknown approval and 422 for a bad action', async () => {
    expect((await click(bob, '00000000-0000-4000-8000-000000000000', 'allow')).body.error.code).toBe('APPROVAL_NOT_FOUND');
    expect((await click(bob, '00000000-0000-4000-8000-000000000000', 'maybe')).status).toBe(422);
  });
});
