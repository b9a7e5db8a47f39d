import { Document, isMap, parseDocument, type Scalar } from 'yaml';

/**
 * The fields of a workflow file, in the order they are written: short fields first, the long
 * `system_prompt` last so a reviewer sees name, tools and triggers without scrolling.
 */
export const WORKFLOW_FILE_FIELDS = [
  'name',
  'description',
  'tool_list',
  'knowledge_base_ids',
  'binding_channels',
  'default',
  'triggers',
  'system_prompt',
] as const;
const TRIGGER_FIELDS = ['keywords', 'regex', 'contact_tags', 'min_score'] as const;

/** A workflow as the API returns it (extra fields such as `id` and timestamps are dropped when rendering). */
export interface WorkflowDocument {
  name: string;
  description: string;
  system_prompt: string;
  tool_list: string;
  knowledge_base_ids: string[];
  triggers: { keywords: string[]; regex: string[]; contact_tags: string[]; min_score?: number };
  binding_channels: string[];
  /** Approval policies (issue 30): written only when there are some. */
  approvals?: unknown[];
  /** The channels' fallback; written only when true (absent means false). */
  default?: boolean;
  /** Webhooks and schedules; written only when there are some. */
  events?: { webhooks: unknown[]; schedules: unknown[] };
}

/** A workflow file that cannot be read as one YAML mapping; `line` is 1-based when known. */
export class WorkflowFileError extends Error {
  constructor(
    readonly file: string,
    readonly line: number | null,
    readonly reason: string,
  ) {
    super(`${file}${line === null ? '' : `:${line}`}: ${reason}`);
    this.name = 'WorkflowFileError';
  }
}

/**
 * Parses one workflow file into a plain object. Only YAML itself is checked here (syntax, one
 * mapping, no duplicate keys); the fields are validated by the hub, which reports them per file.
 * @throws WorkflowFileError naming the file and, for syntax errors, the line.
 */
export function parseWorkflowYaml(text: string, file: string): Record<string, unknown> {
  const document = parseDocument(text, { prettyErrors: false, uniqueKeys: true });
  const [error] = document.errors;
  if (error) {
    const line = lineOf(text, error.pos[0]);
    throw new WorkflowFileError(file, line, `invalid YAML: ${firstLine(error.message)}`);
  }
  if (!isMap(document.contents)) {
    const line = document.contents?.range ? lineOf(text, document.contents.range[0]) : null;
    throw new WorkflowFileError(file, line, 'not a workflow: the file must hold one mapping (name: …, system_prompt: …)');
  }
  return document.toJS({ maxAliasCount: 0 }) as Record<string, unknown>;
}

/**
 * Renders one workflow as YAML: exactly the API's fields in `WORKFLOW_FILE_FIELDS` order,
 * `system_prompt` as a block literal, no id or timestamps. `parseWorkflowYaml(render(w))` gives `w` back.
 */
export function renderWorkflowYaml(workflow: WorkflowDocument): string {
  const triggers: Record<string, unknown> = {};
  for (const field of TRIGGER_FIELDS) if (workflow.triggers[field] !== undefined) triggers[field] = workflow.triggers[field];
  const fields: Record<string, unknown> = {};
  for (const field of WORKFLOW_FILE_FIELDS) {
    if (field === 'default' && !workflow.default) continue;
    // The events go before the long system prompt, and only when the workflow has some.
    if (field === 'system_prompt' && workflow.events && workflow.events.webhooks.length + workflow.events.schedules.length > 0) fields.events = workflow.events;
    fields[field] = field === 'triggers' ? triggers : workflow[field];
  }
  if (workflow.approvals && workflow.approvals.length > 0) fields.approvals = workflow.approvals;
  const document = new Document(fields);
  const prompt = document.get('system_prompt', true) as Scalar | undefined;
  // An empty prompt stays `""`: a block literal of nothing is legal but easy to misread.
  if (prompt && workflow.system_prompt !== '') prompt.type = 'BLOCK_LITERAL';
  // lineWidth 0: never fold long strings, so a one-line description stays one line in diffs.
  return document.toString({ lineWidth: 0 });
}

function firstLine(message: string): string {
  return message.split('\n')[0]!.trim();
}

function lineOf(text: string, offset: number): number {
  return text.slice(0, offset).split('\n').length;
}
