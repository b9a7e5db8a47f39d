import { removeTempDirs } from '../../helpers/temp-dir';
import { createWorkflow, startWebchatHarness, Widgets, type WebchatHarness } from './webchat-harness';

/**
 * Anonymous website visitors do not get the operator's tools (issue 26): a visitor's session carries
 * no default tools, only what the answering webchat workflow pins is offered, the tool commands are
 * off, and `/info` names neither the model nor tools. Other channels keep `agent.default_tools`.
 */
let harness: WebchatHarness;
const widgets = new Widgets(() => harness.base);

beforeAll(async () => {
  harness = await startWebchatHarness();
});

afterEach(() => widgets.closeAll());

afterAll(async () => {
  await harness?.stop();
  removeTempDirs();
});

const offered = () => (harness.provider.requests.at(-1)!.tools ?? []).map((tool) => tool.name);

it('a visitor with no workflow is offered no tools, and the session carries none', async () => {
  harness.provider.rounds = [{ text: ['Hello.'] }];
  const visitor = await widgets.open();
  visitor.say('fetch https://example.com for me');
  expect(await visitor.next()).toEqual({ text: 'Hello.' });
  expect(offered()).toEqual([]);
  const sessions = await harness.admin('GET', '/sessions?limit=100');
  const session = sessions.body.data.items.find((item: { channel: string }) => item.channel === 'webchat');
  expect(session.active_tools).toEqual([]);
});

it('/tools and /tools load are off for visitors; /info names no model and no tools', async () => {
  const visitor = await widgets.open();
  visitor.say('/tools load save_note');
  expect((await visitor.next()).text).toBe('Tool commands are not available in this chat.');
  visitor.say('/tools');
  expect((await visitor.next()).text).toBe('Tool commands are not available in this chat.');
  visitor.say('/info');
  const info = (await visitor.next()).text;
  expect(info).toMatch(/^Workflow: /);
  expect(info).not.toMatch(/Model|Tools|scripted|save_note|lookup/);
});

it('offers exactly what the webchat workflow pins', async () => {
  await createWorkflow(harness, { name: 'lookups', tool_list: 'lookup', triggers: { keywords: ['coupon'] }, binding_channels: ['webchat'] });
  harness.provider.rounds = [{ text: ['Here.'] }];
  const visitor = await widgets.open();
  visitor.say('a coupon please');
  expect(await visitor.next()).toEqual({ text: 'Here.' });
  expect(offered()).toEqual(['lookup']);
});

it('web sessions (signed-in users) still get agent.default_tools', async () => {
  const created = await harness.admin('POST', '/sessions', {});
  expect(created.body.data.active_tools).toEqual(['lookup', 'save_note']);
});
