import { cleanup, fireEvent, render, screen, waitFor } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiError } from '../api/client';
import type { WorkflowTestRun } from '../api/types';
import { casesStorageKey, WorkflowTestsPanel, type WorkflowTestRequest } from './workflow-tests-panel';

afterEach(() => {
  cleanup();
  window.localStorage.clear();
});

const RUN: WorkflowTestRun = {
  passed: 1,
  failed: 1,
  cases: [
    {
      name: 'invoice',
      passed: true,
      failures: [],
      routing: { workflow: 'billing', reason: 'trigger', rule: 'scores: billing 1 (invoice)' },
      turn: null,
      duration_ms: 3,
    },
    {
      name: 'refund',
      passed: false,
      failures: ['routed to "deploy" (trigger), expected "billing"'],
      routing: { workflow: 'deploy', reason: 'trigger', rule: null },
      turn: null,
      duration_ms: 2,
    },
  ],
};

describe('WorkflowTestsPanel', () => {
  it('sends the draft, the workflow it replaces and the cases; shows pass or fail per case with the routing reason', async () => {
    const sent: WorkflowTestRequest[] = [];
    render(
      <WorkflowTestsPanel
        name="billing"
        draft={{ name: 'billing' }}
        replaces="billing"
        run={(request) => {
          sent.push(request);
          return Promise.resolve(RUN);
        }}
      />,
    );
    const box = screen.getByLabelText('Test cases (YAML)');
    fireEvent.change(box, { target: { value: '- {name: invoice, message: my invoice, expect: {workflow: billing}}' } });
    fireEvent.click(screen.getByRole('button', { name: 'Run tests' }));
    const results = await screen.findByLabelText('Test results');
    expect(sent).toEqual([
      { workflow: { name: 'billing' }, replaces: 'billing', cases: '- {name: invoice, message: my invoice, expect: {workflow: billing}}' },
    ]);
    expect(results.textContent).toContain('1 failed');
    const rows = screen.getAllByRole('row').slice(1);
    expect(rows.map((row) => row.textContent)).toEqual([
      'invoicepassbilling by triggerscores: billing 1 (invoice)',
      'refundrouted to "deploy" (trigger), expected "billing"faildeploy by trigger',
    ]);
    expect(window.localStorage.getItem(casesStorageKey('billing'))).toContain('my invoice');
  });

  it('lists the problems of invalid cases and cannot run while the workflow’s YAML is broken', async () => {
    const refusal = new ApiError(422, 'VALIDATION_ERROR', 'The test cases are not valid.', {
      fields: { cases: [{ code: 'invalid_case', message: 'tests/billing.yaml: case 1 "x": expect: unknown field "tool"' }] },
    });
    const { rerender } = render(<WorkflowTestsPanel name="billing" draft={{ name: 'billing' }} replaces="billing" run={() => Promise.reject(refusal)} />);
    fireEvent.click(screen.getByRole('button', { name: 'Run tests' }));
    await waitFor(() => expect(screen.getByLabelText('Problems in the cases').textContent).toContain('unknown field "tool"'));
    rerender(<WorkflowTestsPanel name="billing" draft={null} replaces="billing" run={() => Promise.reject(refusal)} />);
    expect((screen.getByRole('button', { name: 'Run tests' }) as HTMLButtonElement).disabled).toBe(true);
  });
});
