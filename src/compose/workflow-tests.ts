import { AppError } from '../core/errors';
import type { Models } from '../db/models';
import type { WorkflowCaseRunner } from '../workflows/testing/case-runner';
import { WorkflowsRefusedError } from '../workflows/testing/local-target';
import { runCases } from '../workflows/testing/runner';
import { WORKFLOW_FILE_FIELDS } from '../workflows/yaml';
import { startWorkflowTestHub } from './workflow-test-hub';

/**
 * The Web UI's Tests panel: each run starts the `workflows test` sandbox hub (its own temporary
 * SQLite, the scripted model) with the hub's workflows, the edited one replaced by its draft. One
 * run at a time in this process.
 */
export function sandboxCaseRunner(models: Models): WorkflowCaseRunner {
  let running = false;
  return {
    async run(draft, replaces, cases) {
      if (running) throw new AppError('CONFLICT', 'Workflow tests are already running on this hub; try again when they finish.');
      running = true;
      try {
        const draftName = typeof draft.name === 'string' ? draft.name : null;
        const stored = (await models.Workflow.findAll()).filter((row) => row.name !== replaces && row.name !== draftName);
        const workflows = [
          ...stored.map((row) => ({ file: `${row.name} (stored)`, workflow: Object.fromEntries(WORKFLOW_FILE_FIELDS.map((field) => [field, row[field]])) })),
          { file: 'the edited workflow', workflow: draft },
        ];
        const target = await startWorkflowTestHub({ workflows, model: { kind: 'scripted' }, env: {} });
        try {
          return await runCases(cases, target);
        } finally {
          await target.close();
        }
      } catch (error) {
        if (error instanceof WorkflowsRefusedError) throw new AppError('VALIDATION_ERROR', error.message);
        throw error;
      } finally {
        running = false;
      }
    },
  };
}
