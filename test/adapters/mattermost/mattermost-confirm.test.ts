import { ACTION_TITLES } from '../../../adapters/shared/confirm-actions';
import { CONFIRM_ACTIONS } from '../../../src/core/events';
import { request } from '../../helpers/http';
import { removeTempDirs } from '../../helpers/temp-dir';
import { botMessages, startMattermostHarness, waitForBotPost, waitForButtons, type MattermostHarness } from './mattermost-harness';

/** Every one of the six confirmation actions, clicked as Mattermost posts it; the actions endpoint's refusals; a gap in the event numbers. */
describe('Mattermost confirmations and events', () => {
  let h: MattermostHarness;
  let users = 0;
  const newDm = () => {
    users += 1;
    const user = h.mattermost.addUser({ id: `confirm${String(users).padStart(19, '0')}`, username: `clicker${users}`, first_name: 'Clicker' }).id as string;
    return { user, dm: h.mattermost.directChannel(user) };
  };

  beforeAll(async () => {
    h = await startMattermostHarness();
  }, 30_000);

  afterAll(async () => {
    await h?.stop();
    removeTempDirs();
  });

  it.each(CONFIRM_ACTIONS.map((action) => [action]))('a click on %s answers the confirmation with that action and shows the decision', async (action) => {
    const { user, dm } = newDm();
    h.tools.runs.length = 0;
    h.provider.rounds = [{ calls: [{ id: `call-${action}`, name: 'save_note', arguments: JSON.stringify({ text: action }) }] }, { text: ['Done', '.'] }];
    h.mattermost.userPosts(user, dm, `please save ${action}`);
    const asked = await waitForButtons(h.mattermost, dm);
    const button = (asked.props.attachments[0].actions as any[]).find((candidate) => candidate.integration.context.action === action);
    const clicked = await h.mattermost.click(asked.id, button.id, user);
    expect(clicked.status).toBe(200);
    expect(h.mattermost.posts.get(asked.id)!.props.attachments[0].text).toBe(`\`save_note\`: **${ACTION_TITLES[action]}** — chosen by @clicker${users}`);
    if (action === 'cancel') {
      await waitForBotPost(h.mattermost, dm, 'Cancelled.');
    } else {
      await waitForBotPost(h.mattermost, dm, 'Done.');
    }
    const ran = action === 'allow' || action === 'allow_all';
    expect(h.tools.runs).toEqual(ran ? [{ tool: 'save_note', input: { text: action } }] : []);
    h.provider.rounds = [];
  });

  it('under an approval policy (issue 30) a click that may not approve is refused privately, the buttons stay, and an approver decides over the API', async () => {
    const { user, dm } = newDm();
    const guarded = {
      name: 'guarded-notes',
      system_prompt: 'You keep guarded notes.',
      tool_list: 'save_note',
      triggers: { keywords: ['guarded'] },
      binding_channels: ['mattermost'],
      approvals: [{ tools: ['save_note'], approvers: { roles: ['admin'] } }],
    };
    const admin = { authorization: `Bearer ${h.adminToken}`, 'content-type': 'application/json' };
    expect((await request(`${h.api}/assistant/workflows`, { method: 'POST', headers: admin, body: JSON.stringify(guarded) })).status).toBe(201);
    h.tools.runs.length = 0;
    h.provider.rounds = [{ calls: [{ id: 'call-guarded', name: 'save_note', arguments: '{"text":"guarded"}' }] }, { text: ['Saved', '.'] }];
    h.mattermost.userPosts(user, dm, 'save a guarded note please');
    const asked = await waitForButtons(h.mattermost, dm);
    expect(JSON.stringify(asked)).toContain('Waiting for approval by');
    const allow = (asked.props.attachments[0].actions as any[]).find((candidate) => candidate.integration.context.action === 'allow');
    const clicked = await h.mattermost.click(asked.id, allow.id, user);
    expect(clicked.status).toBe(200);
    expect(clicked.body.ephemeral_text).toMatch(/approv/i);
    expect(clicked.body.update).toBeUndefined();
    expect(h.tools.runs).toEqual([]);
    const approved = await request(`${h.api}/approvals/${allow.integration.context.confirmation_id}`, {
      method: 'POST',
      headers: admin,
      body: JSON.stringify({ action: 'allow' }),
    });
    expect(approved.status).toBe(200);
    await waitForBotPost(h.mattermost, dm, 'Saved.');
    expect(h.tools.runs).toEqual([{ tool: 'save_note', input: { text: 'guarded' } }]);
    h.provider.rounds = [];
  });

  it('a click on a confirmation no longer pending is told so; unsigned, forged and malformed clicks are refused in the error envelope', async () => {
    const { user, dm } = newDm();
    h.provider.rounds = [{ calls: [{ id: 'call-stale', name: 'save_note', arguments: '{"text":"x"}' }] }, { text: ['Ok', '.'] }];
    h.mattermost.userPosts(user, dm, 'one more note');
    const asked = await waitForButtons(h.mattermost, dm);
    const allow = (asked.props.attachments[0].actions as any[])[0];
    const url = allow.integration.url as string;
    const click = (body: string) => request(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    const valid = JSON.stringify({ user_id: user, user_name: 'x', post_id: asked.id, context: allow.integration.context });
    expect((await click(valid)).status).toBe(200);
    await waitForBotPost(h.mattermost, dm, 'Ok.');
    const stale = await click(valid);
    expect(stale.status).toBe(200);
    expect(stale.body).toEqual({ ephemeral_text: 'This request is no longer pending.' });

    const forged = await click(JSON.stringify({ user_id: user, context: { ...allow.integration.context, secret: 'x'.repeat(43) } }));
    expect(forged.status).toBe(401);
    expect(forged.body.error.code).toBe('UNAUTHORIZED');
    expect((await click(JSON.stringify([1, 2]))).status).toBe(401);
    const malformed = await click('{"context": ');
    expect(malformed.status).toBe(400);
    expect(malformed.body.error.code).toBe('BAD_REQUEST');
    h.provider.rounds = [];
  });

  it('a gap in the event numbers: the socket reconnects and the post behind the gap is caught up and answered once', async () => {
    const { user, dm } = newDm();
    const connections = h.mattermost.connections;
    h.mattermost.skipSeq(); // the server lost an event for this client
    const post = h.mattermost.userPosts(user, dm, 'after a lost event');
    await waitForBotPost(h.mattermost, dm, 'Hello there, friend.');
    expect(h.mattermost.connections).toBeGreaterThan(connections);
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(botMessages(h.mattermost, dm)).toEqual(['Hello there, friend.']);
    expect(post.id).toBeTruthy();
  });
});
