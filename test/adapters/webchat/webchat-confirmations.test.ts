import { auditRows } from '../../helpers/audit';
import { removeTempDirs } from '../../helpers/temp-dir';
import { startWebchatHarness, Widget, Widgets, type WebchatHarness } from './webchat-harness';

/**
 * A tool that needs confirmation: offered to the visitor as the six actions (quick replies, whose
 * payloads come back as `user_uttered`), or — the default for anonymous visitors — refused.
 */
afterAll(removeTempDirs);

const saveNote = (id: string) => [{ calls: [{ id, name: 'save_note', arguments: JSON.stringify({ text: 'remember me' }) }] }, { text: ['All done.'] }];

describe('confirmations: buttons', () => {
  let harness: WebchatHarness;
  const widgets = new Widgets(() => harness.base);

  beforeAll(async () => {
    harness = await startWebchatHarness({ confirmations: 'buttons' });
    // Visitors get only what a webchat workflow pins (issue 26): one that answers every message.
    expect(
      (
        await harness.admin('POST', '/assistant/workflows', {
          name: 'notes',
          tool_list: 'save_note',
          triggers: { regex: ['.'] },
          binding_channels: ['webchat'],
        })
      ).status,
    ).toBe(201);
  });

  afterEach(() => {
    widgets.closeAll();
  });

  afterAll(async () => {
    await harness?.stop();
  });

  it('offers the six actions as quick replies; a click runs the tool and the answer follows', async () => {
    harness.provider.rounds = saveNote('call-1');
    const visitor = await widgets.open();
    visitor.say('please save a note');
    const question = await visitor.next();
    expect(Object.keys(question).sort()).toEqual(['quick_replies', 'text']); // the widget's test for buttons
    expect(question.text).toContain('save_note');
    expect(question.quick_replies!.map((reply) => reply.title)).toEqual([
      'Allow once',
      'Deny',
      'Always allow',
      'Disable tool',
      'Block all tools this turn',
      'Cancel',
    ]);
    expect(question.quick_replies!.every((reply) => reply.content_type === 'text' && reply.payload.startsWith('/tool_confirm{'))).toBe(true);
    // Waiting for the visitor: no typing.
    expect(visitor.typing.at(-1)).toBe(false);

    visitor.say(question.quick_replies![0]!.payload);
    expect((await visitor.next()).text).toBe('All done.');
    expect(harness.tools.runs).toEqual([{ tool: 'save_note', input: { text: 'remember me' } }]);
    // The audit trail names the visitor (an anonymous contact of the channel) who pressed Allow.
    const conversation = visitor.sessionId!.slice(0, 32);
    const [row] = await auditRows(harness.api, harness.adminToken, { kind: 'tool.confirmation', actor: `webchat:${conversation}` });
    expect(row).toMatchObject({ actor: { key: `webchat:${conversation}`, kind: 'contact' }, subject: 'save_note', action: 'allow' });

    // The same click again: nothing is pending any more.
    visitor.say(question.quick_replies![0]!.payload);
    expect((await visitor.next()).text).toBe('This request is no longer pending.');
  });

  it('cancels the turn from the Cancel reply', async () => {
    harness.provider.rounds = saveNote('call-2');
    const visitor = await widgets.open();
    visitor.say('save another note');
    const question = await visitor.next();
    visitor.say(question.quick_replies!.find((reply) => reply.title === 'Cancel')!.payload);
    expect((await visitor.next()).text).toBe('Cancelled.');
    expect(harness.tools.runs).toHaveLength(1);
  });

  it("never answers another visitor's confirmation: the click names only the confirmation, the session is the socket's", async () => {
    harness.provider.rounds = saveNote('call-3');
    const owner = await widgets.open();
    const other = await widgets.open();
    owner.say('save a third note');
    const question = await owner.next();
    other.say(question.quick_replies![0]!.payload);
    expect((await other.next()).text).toBe('This request is no longer pending.');
    expect(harness.tools.runs).toHaveLength(1);
    owner.say(question.quick_replies![1]!.payload); // Deny
    expect((await owner.next()).text).toBe('All done.');
    expect(harness.tools.runs).toHaveLength(1);
  });
});

describe('confirmations: refuse (the default)', () => {
  it('denies the call instead of asking, and the agent answers without it', async () => {
    const harness = await startWebchatHarness();
    try {
      // Visitors get only what a webchat workflow pins (issue 26): one that answers every message.
      expect(
        (
          await harness.admin('POST', '/assistant/workflows', {
            name: 'notes',
            tool_list: 'save_note',
            triggers: { regex: ['.'] },
            binding_channels: ['webchat'],
          })
        ).status,
      ).toBe(201);
      harness.provider.rounds = saveNote('call-9');
      const visitor = await Widget.open(harness.base);
      visitor.say('please save a note');
      const answer = await visitor.next();
      visitor.close();
      expect(answer).toEqual({ text: 'All done.' });
      expect(harness.tools.runs).toEqual([]);
      const toolMessage = harness.provider.requests.at(-1)!.messages.find((message) => message.role === 'tool');
      expect(JSON.stringify(toolMessage)).toMatch(/disabled|denied|not allowed/i);
    } finally {
      await harness.stop();
    }
  });
});

describe('a refusal stays within its turn (issue 25)', () => {
  it('a tool refused in a refuse-workflow turn is offered (with buttons) in a later turn of a buttons workflow', async () => {
    const harness = await startWebchatHarness({ confirmations: 'refuse', workflow_confirmations: { helpdesk: 'buttons' } });
    try {
      for (const [name, keyword] of [
        ['helpdesk', 'ticket'],
        ['shop', 'order'],
      ]) {
        expect(
          (
            await harness.admin('POST', '/assistant/workflows', {
              name,
              tool_list: 'save_note',
              triggers: { keywords: [keyword] },
              binding_channels: ['webchat'],
            })
          ).status,
        ).toBe(201);
      }
      const visitor = await Widget.open(harness.base);
      harness.provider.rounds = saveNote('call-first');
      visitor.say('about my order, save a note');
      expect(await visitor.next()).toEqual({ text: 'All done.' });
      expect(harness.tools.runs).toHaveLength(0); // refused
      // The same session, a turn the helpdesk answers: save_note is still there, asked with buttons.
      harness.provider.rounds = saveNote('call-second');
      visitor.say('open a ticket and save a note');
      const question = await visitor.next();
      expect(question.quick_replies).toHaveLength(6);
      expect(harness.provider.requests.at(-1)!.tools!.map((tool) => tool.name)).toEqual(['save_note']);
      visitor.say(question.quick_replies![0]!.payload);
      expect(await visitor.next()).toEqual({ text: 'All done.' });
      expect(harness.tools.runs).toHaveLength(1);
      visitor.close();
    } finally {
      await harness.stop();
    }
  });
});

describe('per workflow (workflow_confirmations)', () => {
  it('offers buttons for the turns of a workflow that allows them, and refuses for the others', async () => {
    const harness = await startWebchatHarness({ confirmations: 'refuse', workflow_confirmations: { helpdesk: 'buttons' } });
    try {
      for (const [name, keyword] of [
        ['helpdesk', 'ticket'],
        ['shop', 'order'],
      ]) {
        const created = await harness.admin('POST', '/assistant/workflows', {
          name,
          tool_list: 'save_note',
          triggers: { keywords: [keyword] },
          binding_channels: ['webchat'],
        });
        expect(created.status).toBe(201);
      }
      harness.provider.rounds = saveNote('call-h');
      const helped = await Widget.open(harness.base);
      helped.say('open a ticket and save a note');
      const question = await helped.next();
      expect(question.quick_replies).toHaveLength(6);
      helped.say(question.quick_replies![0]!.payload);
      expect(await helped.next()).toEqual({ text: 'All done.' });
      helped.close();
      expect(harness.tools.runs).toHaveLength(1);

      harness.provider.rounds = saveNote('call-s');
      const shopper = await Widget.open(harness.base);
      shopper.say('about my order, save a note');
      expect(await shopper.next()).toEqual({ text: 'All done.' });
      shopper.close();
      expect(harness.tools.runs).toHaveLength(1); // refused: not run
      const refusals = await auditRows(harness.api, harness.adminToken, { kind: 'tool.confirmation', actor: 'system:webchat-refuse' });
      expect(refusals.map((row) => [row.subject, row.action])).toEqual([['save_note', 'deny']]);
    } finally {
      await harness.stop();
    }
  });
});
