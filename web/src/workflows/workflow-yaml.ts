import { Document, isMap, isNode, parseDocument, type Scalar } from 'yaml';
import type { FieldIssues } from '../api/client';
import type { Workflow } from '../api/types';

/** The order the CLI writes workflow files in (src/workflows/yaml.ts): short fields first, the prompt last. */
const FIELD_ORDER = ['name', 'description', 'tool_list', 'knowledge_base_ids', 'binding_channels', 'default', 'triggers', 'system_prompt'] as const;
const TRIGGER_ORDER = ['keywords', 'regex', 'contact_tags', 'min_score'] as const;

/** A problem to show at a line of the editor (1-based), or at the top when the line is unknown. */
export interface YamlIssue {
  line: number | null;
  field: string | null;
  message: string;
}

export const NEW_WORKFLOW_YAML = `name: my-workflow
description: What this assistant is for
tool_list: current_time, calculator
knowledge_base_ids: []
binding_channels:
  - web
triggers:
  keywords:
    - example
  regex: []
  contact_tags: []
system_prompt: |
  You are a helpful assistant for …
`;

/** A workflow as its YAML file (the same shape `switchboard workflows export` writes). */
export function workflowToYaml(workflow: Workflow): string {
  const triggers: Record<string, unknown> = {};
  for (const field of TRIGGER_ORDER) if (workflow.triggers[field] !== undefined) triggers[field] = workflow.triggers[field];
  const fields: Record<string, unknown> = {};
  for (const field of FIELD_ORDER) {
    if (field === 'default' && !workflow.default) continue; // written only when true
    // Webhooks and schedules go before the long prompt, only when there are some (as the CLI writes them).
    const events = workflow.events;
    if (field === 'system_prompt' && events && events.webhooks.length + events.schedules.length > 0) fields.events = events;
    fields[field] = field === 'triggers' ? triggers : workflow[field];
  }
  const document = new Document(fields);
  const prompt = document.get('system_prompt', true) as Scalar | undefined;
  if (prompt && workflow.system_prompt !== '') prompt.type = 'BLOCK_LITERAL';
  return document.toString({ lineWidth: 0 });
}

export type ParsedYaml = { ok: true; value: Record<string, unknown> } | { ok: false; issues: YamlIssue[] };

/** Reads the editor's text: one YAML mapping, or the syntax problems with their lines. */
export function parseWorkflowYaml(text: string): ParsedYaml {
  const document = parseDocument(text, { prettyErrors: false, uniqueKeys: true });
  if (document.errors.length > 0) {
    return { ok: false, issues: document.errors.map((error) => ({ line: lineAt(text, error.pos[0]), field: null, message: firstLine(error.message) })) };
  }
  if (!isMap(document.contents)) {
    return { ok: false, issues: [{ line: 1, field: null, message: 'A workflow is one mapping: name: …, system_prompt: …' }] };
  }
  return { ok: true, value: document.toJS({ maxAliasCount: 0 }) as Record<string, unknown> };
}

/**
 * The hub's 422 `details.fields` (`triggers.regex.0`, `tool_list`, …) placed at the lines of the
 * YAML they concern: the deepest node of the path that exists in the text.
 */
export function issuesAtLines(text: string, fields: FieldIssues): YamlIssue[] {
  const document = parseDocument(text, { prettyErrors: false });
  const issues: YamlIssue[] = [];
  for (const [field, problems] of Object.entries(fields)) {
    const path = field === 'body' ? [] : field.split('.').map((part) => (/^\d+$/.test(part) ? Number(part) : part));
    let line: number | null = null;
    // A strict object's "Unrecognized key" names the key in its message, not in the path.
    const unknownKey = /nrecognized keys?:? "([^"]+)"/.exec(problems[0]?.message ?? '')?.[1];
    if (unknownKey) line = keyLine(text, document, [...path, unknownKey]);
    for (let depth = path.length; depth > 0 && line === null; depth -= 1) {
      const node = document.getIn(path.slice(0, depth), true);
      line = isNode(node) && node.range ? lineAt(text, node.range[0]) : keyLine(text, document, path.slice(0, depth));
    }
    for (const problem of problems) issues.push({ line, field, message: problem.message });
  }
  return issues.sort((a, b) => (a.line ?? 0) - (b.line ?? 0));
}

/** The line of a mapping key (for a key whose value is empty or missing). */
function keyLine(text: string, document: ReturnType<typeof parseDocument>, path: (string | number)[]): number | null {
  const parent = path.length > 1 ? document.getIn(path.slice(0, -1), true) : document.contents;
  if (!isMap(parent)) return null;
  const pair = parent.items.find((item) => isNode(item.key) && (item.key as Scalar).value === path.at(-1));
  return pair && isNode(pair.key) && pair.key.range ? lineAt(text, pair.key.range[0]) : null;
}

function lineAt(text: string, offset: number): number {
  return text.slice(0, offset).split('\n').length;
}

function firstLine(message: string): string {
  return message.split('\n')[0]!.trim();
}
