import { startProfileHub, testProfiles, PROFILE_START_TIMEOUT_MS, type ProfileHub } from '../helpers/hub-profiles';
import { removeTempDirs } from '../helpers/temp-dir';
import type { TestSocket } from '../helpers/ws-client';
import { framesOf, ProtocolClient, restTurn, turnEnd, CASE_TIMEOUT_MS } from './protocol-client';

/**
 * Workflows, tools with their confirmations, and knowledge, on both profiles. Scaled, what an admin
 * changes on API process A (a workflow, a session's tools, a collection) must be what the worker
 * process uses for the next turn, and what B answers.
 */
jest.setTimeout(CASE_TIMEOUT_MS);

describe.each(testProfiles())('workflows, tools and knowledge (%s)', (profile) => {
  let hub: ProfileHub;
  let admin: ProtocolClient;
  let user: ProtocolClient;

  beforeAll(async () => {
    hub = await startProfileHub(profile);
    admin = await ProtocolClient.register(hub, 'root');
    user = await ProtocolClient.register(hub, 'june');
  }, PROFILE_START_TIMEOUT_MS);

  afterAll(async () => {
    await hub?.stop();
    removeTempDirs();
  });

  /** A user session with its socket on process B. */
  async function session(): Promise<{ id: string; socket: TestSocket }> {
    const id = await user.newSession();
    return { id, socket: await user.socket(id) };
  }

  const toolsCalled = (socket: TestSocket, turnId: string) =>
    framesOf(socket, turnId)
      .filter((frame) => frame.type === 'tool_start')
      .map((frame) => frame.payload.tool_name);

  it('workflows: written by admins on one process, read on the other at once; sync is a dry run, then applies, then changes nothing', async () => {
    const oncall = {
      name: 'oncall',
      system_prompt: 'You help the on-call engineer.',
      tool_list: 'current_time',
      triggers: { keywords: ['outage', 'pager'] },
      binding_channels: ['web'],
    };
    expect((await user.post('/assistant/workflows', oncall)).status).toBe(403);
    expect((await admin.post('/assistant/workflows', oncall)).status).toBe(201);
    expect((await admin.post('/assistant/workflows', oncall)).status).toBe(409);
    expect((await user.onOther('GET', '/assistant/workflows/oncall')).body.data).toMatchObject({ ...oncall, knowledge_base_ids: [] });
    expect((await admin.patch('/assistant/workflows/oncall', { triggers: { keywords: ['outage', 'pager', 'incident'] } })).status).toBe(200);
    expect((await admin.onOther('GET', '/assistant/workflows/oncall')).body.data.triggers.keywords).toContain('incident');

    const sales = {
      name: 'sales',
      system_prompt: 'You answer pricing questions.',
      tool_list: 'calculator',
      triggers: { keywords: ['pricing'] },
      binding_channels: ['web'],
    };
    const dry = await admin.post('/assistant/workflows/sync', { workflows: [sales], dry_run: true });
    expect(dry.body.data).toMatchObject({ created: ['sales'], dry_run: true });
    expect((await admin.onOther('GET', '/assistant/workflows/sales')).status).toBe(404);
    expect((await admin.post('/assistant/workflows/sync', { workflows: [sales] })).body.data).toMatchObject({ created: ['sales'] });
    expect((await admin.onOther('POST', '/assistant/workflows/sync', { workflows: [sales] })).body.data).toMatchObject({ created: [], unchanged: ['sales'] });
    expect((await admin.post('/assistant/workflows', { name: 'broken', tool_list: 'teleport' })).status).toBe(422);
  });

  it('routes turns on the worker with the workflows just written: triggers, the sticky session workflow, metadata.workflow, pinned tools', async () => {
    const { id, socket } = await session();
    const [paged, pagedEnd] = await restTurn(user, socket, id, 'the pager went off, what time is it in Tokyo?');
    expect(pagedEnd.payload).toMatchObject({ workflow: 'oncall', routing_reason: expect.any(String) });
    expect(toolsCalled(socket, paged)).toEqual(['current_time']);
    const [, sticky] = await restTurn(user, socket, id, 'thanks, and then?');
    expect(sticky.payload.workflow).toBe('oncall');
    // sales pins calculator only: no clock there.
    const [asked, askedEnd] = await restTurn(user, socket, id, 'what time is it in Tokyo?', { metadata: { workflow: 'sales' } });
    expect(askedEnd.payload.workflow).toBe('sales');
    expect(toolsCalled(socket, asked)).toEqual([]);
    const [sum] = await restTurn(user, socket, id, 'calculate 6 * 7');
    expect(toolsCalled(socket, sum)).toEqual(['calculator']);
    const unknown = await user.post(`/sessions/${id}/messages`, { text: 'hi', metadata: { workflow: 'nope' } });
    expect(unknown.status).toBe(422);
    // Changed on A, used by the worker at once.
    expect((await admin.patch('/assistant/workflows/sales', { tool_list: 'current_time' })).status).toBe(200);
    const [clock] = await restTurn(user, socket, id, 'what time is it in Tokyo?', { metadata: { workflow: 'sales' } });
    expect(toolsCalled(socket, clock)).toEqual(['current_time']);
    socket.close();
  });

  it("tools: the catalogue, a session's tools changed on one process, honoured by the worker's next turn", async () => {
    const catalogue = (await user.onOther('GET', '/tools')).body.data as { name: string; requires_confirmation: boolean }[];
    expect(catalogue.find((tool) => tool.name === 'write_file')).toMatchObject({ requires_confirmation: true });
    expect(catalogue.find((tool) => tool.name === 'calculator')).toMatchObject({ requires_confirmation: false });
    const { id, socket } = await session();
    const disabled = await user.patch(`/sessions/${id}/tools`, { disable: ['calculator'] });
    expect(disabled.body.data.find((tool: { name: string }) => tool.name === 'calculator').status).toBe('disabled');
    expect((await user.onOther('GET', `/sessions/${id}/tools`)).body.data.find((tool: { name: string }) => tool.name === 'calculator').status).toBe('disabled');
    const [off] = await restTurn(user, socket, id, 'calculate 2 + 3');
    expect(toolsCalled(socket, off)).toEqual([]);
    await user.patch(`/sessions/${id}/tools`, { enable: ['calculator'] });
    const [on, onEnd] = await restTurn(user, socket, id, 'calculate 2 + 3');
    expect(toolsCalled(socket, on)).toEqual(['calculator']);
    expect(onEnd.payload.text).toContain('5');
    socket.close();
  });

  it('confirmations across processes: allow runs the tool once, deny refuses it, allow_all stops asking in the session', async () => {
    const { id, socket } = await session();
    const confirm = async (text: string, action: string | null) => {
      const sent = await user.post(`/sessions/${id}/messages`, { text });
      const turnId = sent.body.data.id as string;
      if (action) {
        const asked = await socket.next((frame) => frame.type === 'tool_confirm_request' && frame.payload.turn_id === turnId, 30_000);
        socket.send({ type: 'tool_confirm', payload: { confirmation_id: asked.payload.confirmation_id, action } });
      }
      const end = await turnEnd(socket, turnId);
      return { turnId, end, toolEnd: framesOf(socket, turnId).find((frame) => frame.type === 'tool_end') };
    };
    const allowed = await confirm('write a file plan.md containing ship it on friday', 'allow');
    expect(allowed.end.type).toBe('done');
    expect(allowed.toolEnd.payload).toMatchObject({ tool_name: 'write_file', error: null });
    const denied = await confirm('write a file other.md containing not this one', 'deny');
    expect(denied.end.type).toBe('done');
    expect(denied.toolEnd.payload.error).toEqual(expect.any(String));
    await confirm('write a file third.md containing and this', 'allow_all');
    const unasked = await confirm('write a file fourth.md containing no question now', null);
    expect(framesOf(socket, unasked.turnId).map((frame) => frame.type)).not.toContain('tool_confirm_request');
    expect(unasked.toolEnd.payload).toMatchObject({ tool_name: 'write_file', error: null });
    const tools = (await user.get(`/sessions/${id}/tools`)).body.data as { name: string; auto_approved: boolean }[];
    expect(tools.find((tool) => tool.name === 'write_file')!.auto_approved).toBe(true);
    const history = (await user.onOther('GET', `/sessions/${id}/messages?limit=100`)).body.data.items as {
      role: string;
      tool_calls: { tool_name: string; error: string | null }[];
    }[];
    const calls = history.flatMap((item) => item.tool_calls);
    expect(calls.filter((call) => call.tool_name === 'write_file' && call.error === null)).toHaveLength(3);
    socket.close();
  });

  it('knowledge: a collection filled on one process is searched on the other and answers turns on the worker; a deleted document is gone everywhere', async () => {
    expect((await user.post('/knowledge/collections', { name: 'runbooks' })).status).toBe(403);
    expect((await admin.post('/knowledge/collections', { name: 'runbooks' })).status).toBe(201);
    const failover = await admin.post('/knowledge/collections/runbooks/documents', {
      title: 'Database failover',
      text: 'To fail over the primary database, promote the replica with pgctl promote, then repoint the service DNS record.',
    });
    expect(failover.status).toBe(201);
    const form = new FormData();
    form.append(
      'file',
      new Blob(['Rollbacks: redeploy the previous release tag with the deploy tool, then watch the error rate.'], { type: 'text/plain' }),
      'rollback.txt',
    );
    const upload = await fetch(`${hub.api}/knowledge/collections/runbooks/documents`, {
      method: 'POST',
      headers: { authorization: `Bearer ${admin.token}` },
      body: form,
    });
    expect(upload.status).toBe(201);
    const search = await user.onOther('POST', '/knowledge/collections/runbooks/search', { query: 'promote the replica', top_k: 3 });
    expect(search.body.data.results[0]).toMatchObject({ title: 'Database failover' });

    expect(
      (
        await admin.post('/assistant/workflows', {
          name: 'runbook',
          system_prompt: 'Answer from the runbooks.',
          knowledge_base_ids: ['runbooks'],
          triggers: { keywords: ['failover', 'rollback'] },
          binding_channels: ['web'],
        })
      ).status,
    ).toBe(201);
    const { id, socket } = await session();
    const [, answer] = await restTurn(user, socket, id, 'How do I do a database failover?');
    expect(answer.payload).toMatchObject({ workflow: 'runbook', text: expect.stringContaining('promote the replica with pgctl promote') });

    expect((await admin.delete(`/knowledge/collections/runbooks/documents/${failover.body.data.id}`)).status).toBe(200);
    const after = await user.onOther('POST', '/knowledge/collections/runbooks/search', { query: 'promote the replica', top_k: 3 });
    expect(after.body.data.results.map((hit: { title: string }) => hit.title)).not.toContain('Database failover');
    const [, later] = await restTurn(user, socket, id, 'How do I do a database failover?');
    expect(later.payload.text).not.toContain('pgctl promote');
    socket.close();
  });
});
