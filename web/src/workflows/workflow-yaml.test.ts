import { describe, expect, it } from 'vitest';
import type { Workflow } from '../api/types';
import { NEW_WORKFLOW_YAML, issuesAtLines, parseWorkflowYaml, workflowToYaml } from './workflow-yaml';

const workflow: Workflow = {
  id: 'id',
  name: 'billing',
  description: 'Invoices',
  system_prompt: 'You handle billing.\nBe brief.',
  tool_list: 'calculator',
  knowledge_base_ids: [],
  triggers: { keywords: ['refund'], regex: ['\\binv-\\d+'], contact_tags: [] },
  binding_channels: ['web'],
  created_at: '',
  updated_at: '',
};

describe('workflow YAML', () => {
  it('keeps the webhooks and schedules, so saving from the editor does not drop them', () => {
    const events = {
      webhooks: [{ name: 'ci', verify: 'token' as const, secret_env: 'CI_TOKEN', message: 'Build {{ payload.n }}', deliver: 'slack:C1' }],
      schedules: [{ name: 'daily', cron: '0 9 * * *', message: 'Report', deliver: 'telegram:-1' }],
    };
    const parsed = parseWorkflowYaml(workflowToYaml({ ...workflow, events }));
    expect(parsed.ok && parsed.value.events).toEqual(events);
    expect(workflowToYaml(workflow)).not.toContain('events');
  });

  it('renders the API fields only, the prompt as a block, and reads back the same workflow', () => {
    const text = workflowToYaml(workflow);
    expect(text).not.toContain('created_at');
    expect(text).toMatch(/system_prompt: \|/);
    const parsed = parseWorkflowYaml(text);
    expect(parsed).toEqual({
      ok: true,
      value: {
        name: 'billing',
        description: 'Invoices',
        tool_list: 'calculator',
        knowledge_base_ids: [],
        binding_channels: ['web'],
        triggers: workflow.triggers,
        system_prompt: 'You handle billing.\nBe brief.',
      },
    });
  });

  it('reports syntax errors at their line', () => {
    const parsed = parseWorkflowYaml('name: a\ndescription: b\ntriggers: [oops\n');
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.issues[0]!.line).toBeGreaterThanOrEqual(3);
    expect(parseWorkflowYaml('- just\n- a list\n')).toEqual({ ok: false, issues: [{ line: 1, field: null, message: expect.stringContaining('one mapping') }] });
    expect(parseWorkflowYaml(NEW_WORKFLOW_YAML).ok).toBe(true);
  });

  it('places the hub’s field errors at the lines they concern', () => {
    const text = workflowToYaml(workflow);
    const lines = text.split('\n');
    const issues = issuesAtLines(text, {
      'triggers.regex.0': [{ code: 'custom', message: 'Refused: unsafe.' }],
      tool_list: [{ code: 'unknown_tool', message: 'No such tool: x.' }],
      body: [{ code: 'unrecognized_keys', message: 'Unrecognized key: "system_prompt"' }],
      'triggers.min_score': [{ code: 'too_small', message: 'Too small.' }],
    });
    const lineOf = (field: string) => issues.find((issue) => issue.field === field)!.line!;
    expect(lines[lineOf('triggers.regex.0') - 1]).toContain('\\binv-\\d+');
    expect(lines[lineOf('tool_list') - 1]).toMatch(/^tool_list:/);
    expect(lines[lineOf('body') - 1]).toMatch(/^system_prompt:/);
    // Not in the text: the nearest thing that is (the triggers mapping).
    expect(lines[lineOf('triggers.min_score') - 1]).toMatch(/keywords/);
  });
});
