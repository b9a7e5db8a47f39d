import { cleanup, fireEvent, render, screen, within } from '@testing-library/react';
import { MemoryRouter } from 'react-router';
import { afterEach, describe, expect, it } from 'vitest';
import type { Workflow } from '../api/types';
import { DeliveriesTable, EventsEmpty, WorkflowEventsCard, type EventDelivery, type EventSchedule, type ScheduleAction } from './events-view';
import { hookCurl } from './hook-curl';

afterEach(cleanup);

const WORKFLOW: Workflow = {
  id: 'w1',
  name: 'deploys',
  description: '',
  system_prompt: 'Summarise deploys.',
  tool_list: '',
  knowledge_base_ids: [],
  triggers: { keywords: [], regex: [], contact_tags: [] },
  binding_channels: [],
  events: {
    webhooks: [
      { name: 'github', verify: 'github', secret_env: 'DEPLOY_HOOK_SECRET', message: 'Deploy', deliver: 'slack:C0123' },
      { name: 'ci', verify: 'token', secret_env: 'CI_TOKEN', message: 'Build', deliver: 'telegram:-100' },
    ],
    schedules: [{ name: 'handover', cron: '0 9 * * 1-5', timezone: 'Europe/Berlin', message: 'Handover', deliver: 'slack:C0123' }],
  },
  created_at: '2026-01-01T00:00:00Z',
  updated_at: '2026-01-01T00:00:00Z',
};

const SCHEDULE: EventSchedule = {
  workflow: 'deploys',
  name: 'handover',
  cron: '0 9 * * 1-5',
  timezone: 'Europe/Berlin',
  deliver: 'slack:C0123',
  paused: false,
  next_fire_at: '2026-12-01T08:00:00.000Z',
  last_fire_at: null,
  last_outcome: null,
};

describe('hookCurl', () => {
  it('names the secret’s environment variable and never carries a secret', () => {
    const github = hookCurl('https://hub.example/api/v1/hooks/deploys/github', { verify: 'github', secret_env: 'DEPLOY_HOOK_SECRET' });
    expect(github).toContain("curl -X POST 'https://hub.example/api/v1/hooks/deploys/github'");
    expect(github).toContain("X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the body, keyed with $DEPLOY_HOOK_SECRET>'");
    const standard = hookCurl('u', { verify: 'standard', secret_env: 'STD' });
    expect(standard).toMatch(/webhook-id: .*webhook-timestamp: .*webhook-signature: v1,<base64 HMAC-SHA256 .* keyed with \$STD>/s);
    // A bearer token is read from the variable by the shell (double quotes), so the command runs as is.
    expect(hookCurl('u', { verify: 'token', secret_env: 'CI_TOKEN' })).toContain('-H "Authorization: Bearer $CI_TOKEN"');
    expect(hookCurl('u', { verify: 'none' })).not.toMatch(/Authorization|Signature|signature/);
  });
});

describe('WorkflowEventsCard', () => {
  it('shows each hook’s URL, verify kind, target and test curl, and the schedules with their next run and actions', () => {
    const actions: [string, ScheduleAction][] = [];
    render(
      <MemoryRouter>
        <WorkflowEventsCard
          workflow={WORKFLOW}
          schedules={[SCHEDULE, { ...SCHEDULE, name: 'nightly', paused: true }]}
          origin="https://hub.example"
          onScheduleAction={(item, action) => actions.push([item.name, action])}
          busy={null}
        />
      </MemoryRouter>,
    );
    expect(screen.getByText('POST https://hub.example/api/v1/hooks/deploys/github')).toBeTruthy();
    expect(screen.getByText('POST https://hub.example/api/v1/hooks/deploys/ci')).toBeTruthy();
    expect(screen.getByText('→ slack:C0123')).toBeTruthy();
    expect(screen.getByLabelText('Test request for github').textContent).toContain('$DEPLOY_HOOK_SECRET');
    expect(screen.getByLabelText('Test request for ci').textContent).toContain('Bearer $CI_TOKEN');
    expect(screen.getByRole('button', { name: 'Copy the test curl for github' })).toBeTruthy();

    const table = screen.getByRole('table', { name: 'Schedules' });
    const rows = within(table).getAllByRole('row');
    expect(rows[1].textContent).toContain('0 9 * * 1-5');
    expect(rows[1].textContent).toContain('Europe/Berlin');
    expect(rows[1].textContent).toContain(new Date(SCHEDULE.next_fire_at!).toLocaleString());
    expect(rows[2].textContent).toContain('paused');
    fireEvent.click(within(rows[1]).getByRole('button', { name: 'Run now' }));
    fireEvent.click(within(rows[1]).getByRole('button', { name: 'Pause' }));
    fireEvent.click(within(rows[2]).getByRole('button', { name: 'Resume' }));
    expect(actions).toEqual([
      ['handover', 'run'],
      ['handover', 'pause'],
      ['nightly', 'resume'],
    ]);
  });
});

describe('DeliveriesTable', () => {
  const delivery = (over: Partial<EventDelivery>): EventDelivery => ({
    id: over.name ?? 'd',
    workflow: 'deploys',
    source: 'webhook',
    name: 'github',
    status: 'delivered',
    deliver: 'slack:C0123',
    attempts: 1,
    reason: null,
    platform_message_id: null,
    created_at: new Date().toISOString(),
    ...over,
  });

  it('shows the status, the platform message id of a delivered one and the reason of a failed one', () => {
    render(
      <DeliveriesTable
        items={[
          delivery({ id: 'a', platform_message_id: '1700000000.000100' }),
          delivery({ id: 'b', status: 'failed', reason: 'the slack channel is not running here', attempts: 5 }),
        ]}
      />,
    );
    const rows = within(screen.getByRole('table', { name: 'Recent deliveries' })).getAllByRole('row');
    expect(rows[1].textContent).toContain('delivered');
    expect(rows[1].textContent).toContain('1700000000.000100');
    expect(rows[2].textContent).toContain('failed');
    expect(rows[2].textContent).toContain('the slack channel is not running here');
    expect(rows[2].textContent).toContain('5 attempts');
  });

  it('says what to do when there is none', () => {
    render(<DeliveriesTable items={[]} />);
    expect(screen.getByText(/No deliveries yet/)).toBeTruthy();
  });
});

describe('EventsEmpty', () => {
  it('explains how to declare events and links the guide', () => {
    render(<EventsEmpty guide="https://docs.example/guides/events" />);
    expect(screen.getByText('events:')).toBeTruthy();
    expect(screen.getByRole('link', { name: 'Events: webhooks and schedules' }).getAttribute('href')).toBe('https://docs.example/guides/events');
  });
});
