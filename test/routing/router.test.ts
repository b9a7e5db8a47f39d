import { randomUUID } from 'node:crypto';
import type { WorkflowRow } from '../../src/db/models';
import { Router, bindingCovers } from '../../src/routing/router';
import { CHANNELS } from '../../adapters';
import { routingChannelOf } from '../../src/core/channel';

function workflow(
  name: string,
  fields: { keywords?: string[]; regex?: string[]; contact_tags?: string[]; min_score?: number; binding_channels?: string[] } = {},
): WorkflowRow {
  return {
    id: randomUUID(),
    name,
    binding_channels: fields.binding_channels ?? ['web', 'slack', 'telegram'],
    triggers: {
      keywords: fields.keywords ?? [],
      regex: fields.regex ?? [],
      contact_tags: fields.contact_tags ?? [],
      ...(fields.min_score !== undefined ? { min_score: fields.min_score } : {}),
    },
  } as unknown as WorkflowRow;
}

describe('the router', () => {
  const deploy = workflow('deploy', { keywords: ['deploy', 'rollback', 'release train'] });
  const billing = workflow('billing', { keywords: ['invoice', 'refund'], regex: ['\\binv-\\d{4,}\\b'] });
  const vip = workflow('vip', { contact_tags: ['vip', 'enterprise'], min_score: 2 });
  const router = new Router([deploy, billing, vip]);
  const route = (text: string, extra: Partial<Parameters<Router['route']>[0]> = {}) => router.route({ text, channel: 'web', ...extra });

  it('matches stemmed keywords: "deploying" and "rollbacks" count as "deploy" and "rollback"', () => {
    expect(route('We are deploying today, any rollbacks planned?')).toEqual({ workflowId: deploy.id, reason: 'trigger', score: 2 });
  });

  it('matches phrases only as phrases', () => {
    expect(route('the release train leaves at noon').score).toBe(1);
    expect(route('train the model before the release').reason).toBe('default');
  });

  it('counts a matching regex 2 and each distinct keyword 1; the highest score wins', () => {
    expect(route('refund for INV-20931 please')).toEqual({ workflowId: billing.id, reason: 'trigger', score: 3 });
    expect(route('deploy the refund fix')).toMatchObject({ reason: 'trigger', score: 1 }); // a tie: 1 each
  });

  it('breaks ties by the alphabetically first name', () => {
    expect(route('deploy the refund fix').workflowId).toBe(billing.id); // "billing" < "deploy"
  });

  it('counts contact tags the contact carries, and honours min_score', () => {
    expect(route('hello', { contact: { tags: ['vip'], workflow_id: null } }).reason).toBe('default'); // 1 < min_score 2
    expect(route('hello', { contact: { tags: ['vip', 'enterprise'], workflow_id: null } })).toEqual({ workflowId: vip.id, reason: 'trigger', score: 2 });
  });

  it('resolves in order: metadata.workflow, contact binding, triggers, session, default', () => {
    const session = billing.id;
    const contact = { tags: [], workflow_id: vip.id };
    expect(route('deploy now', { requestedWorkflow: 'billing', contact, sessionWorkflowId: session })).toMatchObject({
      workflowId: billing.id,
      reason: 'metadata',
    });
    expect(route('deploy now', { contact, sessionWorkflowId: session })).toMatchObject({ workflowId: vip.id, reason: 'contact' });
    expect(route('deploy now', { sessionWorkflowId: session })).toMatchObject({ workflowId: deploy.id, reason: 'trigger' });
    expect(route('good morning', { sessionWorkflowId: session })).toMatchObject({ workflowId: billing.id, reason: 'session' });
    expect(route('good morning')).toEqual({ workflowId: null, reason: 'default' });
    expect(route('good morning', { requestedWorkflow: 'no-such-workflow' })).toEqual({ workflowId: null, reason: 'default' });
  });

  it('scores only workflows bound to the message channel; a broad binding covers narrower channels', () => {
    const onlySlackOps = workflow('ops', { keywords: ['outage'], binding_channels: ['slack:C-OPS'] });
    const scoped = new Router([onlySlackOps]);
    expect(scoped.route({ text: 'outage!', channel: 'web' }).reason).toBe('default');
    expect(scoped.route({ text: 'outage!', channel: 'slack:C-OTHER' }).reason).toBe('default');
    expect(scoped.route({ text: 'outage!', channel: 'slack:C-OPS' }).reason).toBe('trigger');
    expect(bindingCovers('slack', 'slack:C1')).toBe(true);
    expect(bindingCovers('slack:C1', 'slack')).toBe(false);
    expect(bindingCovers('telegram', 'telegram:42')).toBe(true);
  });

  it('derives the routing channel from the session key', () => {
    expect(routingChannelOf({ channel: 'web', session_key: null }, CHANNELS)).toBe('web');
    expect(routingChannelOf({ channel: 'slack', session_key: 'slack::T123:C456:1700000000.000100' }, CHANNELS)).toBe('slack:C456');
    expect(routingChannelOf({ channel: 'telegram', session_key: 'telegram::987654321' }, CHANNELS)).toBe('telegram:987654321');
  });

  it('compiles triggers once at load and routes against many workflows', () => {
    // Recompiling is explicit (load); route() never recompiles: the compiled keyword lists are reused.
    const many = new Router(Array.from({ length: 50 }, (_, i) => workflow(`w${String(i).padStart(2, '0')}`, { keywords: [`topic${i}`] })));
    expect(many.size).toBe(50);
    expect(many.route({ text: 'about topic42', channel: 'web' })).toMatchObject({ reason: 'trigger', score: 1 });
  });
});
