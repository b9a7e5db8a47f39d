import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { WorkflowFileError, WORKFLOW_FILE_FIELDS, parseWorkflowYaml, renderWorkflowYaml, type WorkflowDocument } from '../../src/workflows/yaml';
import { REPO_ROOT } from '../helpers/process';

function workflow(overrides: Partial<WorkflowDocument> = {}): WorkflowDocument {
  return {
    name: 'example',
    description: 'Says: "hello" # not a comment',
    system_prompt: 'Line one.\n  Indented line.\n\nAfter a blank line.\n',
    tool_list: 'calculator, current_time',
    knowledge_base_ids: ['handbook'],
    triggers: { keywords: ['yes', 'no', 'null', '123', '#tag'], regex: ['^\\s*(?:help|sos)\\b'], contact_tags: ['vip'] },
    binding_channels: ['web', 'slack:C123'],
    ...overrides,
  };
}

function failure(text: string): WorkflowFileError {
  try {
    parseWorkflowYaml(text, 'dir/file.yaml');
  } catch (error) {
    if (error instanceof WorkflowFileError) return error;
    throw error;
  }
  throw new Error('parsed without an error');
}

describe('renderWorkflowYaml', () => {
  it('writes exactly the API fields in a stable order, the prompt as a block literal, no id or timestamps', () => {
    const text = renderWorkflowYaml({ ...workflow(), id: 'b7c0…', created_at: '2026-01-01T00:00:00.000Z' } as WorkflowDocument);
    const keys = text
      .split('\n')
      .filter((line) => /^[a-z_]+:/.test(line))
      .map((line) => line.split(':')[0]);
    // `default` is written only when true (issue 33), so files without it stay as they were.
    expect(keys).toEqual(WORKFLOW_FILE_FIELDS.filter((field) => field !== 'default'));
    const fallback = renderWorkflowYaml({ ...workflow(), default: true });
    expect(fallback).toContain('\ndefault: true\ntriggers:');
    expect(parseWorkflowYaml(fallback, 'x.yaml')).toMatchObject({ default: true });
    expect(text).toContain('system_prompt: |\n  Line one.\n    Indented line.\n\n  After a blank line.\n');
    expect(text).not.toMatch(/^(id|created_at|updated_at):/m);
  });

  it.each([
    ['a prompt with indentation, blank lines and a trailing newline', workflow()],
    ['a prompt without a trailing newline', workflow({ system_prompt: 'One line, no newline' })],
    ['a prompt ending in blank lines', workflow({ system_prompt: 'Keep these\n\n\n' })],
    ['a prompt starting with spaces', workflow({ system_prompt: '  starts indented\nthen not' })],
    ['a prompt with trailing spaces and tabs', workflow({ system_prompt: 'spaces   \n\ttab\n' })],
    ['an empty prompt and description', workflow({ system_prompt: '', description: '' })],
    ['a min_score', workflow({ triggers: { keywords: [], regex: [], contact_tags: [], min_score: 2.5 } })],
    ['YAML-looking strings', workflow({ description: '- [not, a, list]', tool_list: '', system_prompt: '---\n...\nkey: value\n' })],
  ])('parses back to the same workflow: %s', (_label, original) => {
    const parsed = parseWorkflowYaml(renderWorkflowYaml(original), 'x.yaml');
    const expected = Object.fromEntries(WORKFLOW_FILE_FIELDS.map((field) => [field, original[field]]));
    expect(parsed).toEqual(expected);
    // Same key order too, so a re-export produces the same bytes.
    expect(renderWorkflowYaml(parsed as unknown as WorkflowDocument)).toBe(renderWorkflowYaml(original));
  });
});

describe('parseWorkflowYaml', () => {
  it('names the file and the line of a syntax error', () => {
    const error = failure('name: broken\ntriggers:\n  keywords: [help, sos\nsystem_prompt: hi\n');
    expect(error.file).toBe('dir/file.yaml');
    expect(error.line).toBe(4);
    expect(error.message).toMatch(/^dir\/file\.yaml:4: invalid YAML: /);
  });

  it('refuses duplicate keys with their line', () => {
    const error = failure('name: a\ndescription: x\nname: b\n');
    expect(error.line).toBe(3);
    expect(error.message).toContain('unique');
  });

  it.each([
    ['a list', '- name: a\n- name: b\n'],
    ['a string', 'just text\n'],
    ['an empty file', ''],
  ])('refuses %s: one mapping per file', (_label, text) => {
    expect(failure(text).message).toContain('dir/file.yaml');
    expect(failure(text).reason).toMatch(/must hold one mapping/);
  });

  it('keeps unknown fields, so the hub names them in its refusal', () => {
    expect(parseWorkflowYaml('name: a\nsystem_promt: typo\n', 'f.yaml')).toEqual({ name: 'a', system_promt: 'typo' });
  });
});

describe('the shipped workflows/*.yaml', () => {
  const dir = path.join(REPO_ROOT, 'workflows');
  const files = readdirSync(dir).filter((name) => name.endsWith('.yaml'));

  it('are written exactly as `workflows export` would write them (an export over them changes no byte)', () => {
    expect(files.length).toBeGreaterThanOrEqual(3);
    for (const name of files) {
      const text = readFileSync(path.join(dir, name), 'utf8');
      expect(renderWorkflowYaml(parseWorkflowYaml(text, name) as unknown as WorkflowDocument)).toBe(text);
      // ...and are named after the workflow they hold.
      expect(`${(parse(text) as { name: string }).name}.yaml`).toBe(name);
    }
  });
});
