import type { SyncResult } from '../workflow-service';

/** One workflow file as read from disk (the CLI's `readWorkflowDir`). */
export interface WorkflowFileInput {
  file: string;
  workflow: Record<string, unknown>;
}

/** Which model answers the cases' turns offline. */
export type CaseModelChoice = { kind: 'scripted' } | { kind: 'record'; file: string } | { kind: 'replay'; file: string };

/** What the offline hub of `switchboard workflows test` needs (src/compose/workflow-test-hub.ts builds it). */
export interface LocalTargetOptions {
  workflows: readonly WorkflowFileInput[];
  model: CaseModelChoice;
  /** A hub config.yaml to run with (tool settings); default: the built-in defaults. */
  configFile?: string;
  /** The caller's environment: only the model's SERVICE_LLM_* variables are read, for `record`. */
  env: Record<string, string | undefined>;
}

/** The test hub refused workflow files: nothing was run. */
export class WorkflowsRefusedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WorkflowsRefusedError';
  }
}

/** The workflows the test hub refused, one line each, naming the file and the field. */
export function describeSyncErrors(errors: SyncResult['errors'], files: readonly WorkflowFileInput[]): string {
  const lines = errors.map((error) => {
    const file = files[error.index]?.file ?? `workflow ${error.index + 1}`;
    const fields = Object.entries(error.fields ?? {}).map(([field, issues]) => `${field}: ${issues.map((issue) => issue.message).join('; ')}`);
    return `✗ ${file}: ${error.message}${fields.length > 0 ? ` (${fields.join('; ')})` : ''}`;
  });
  return `${lines.join('\n')}\n${errors.length} workflow file(s) refused; no case was run.`;
}
