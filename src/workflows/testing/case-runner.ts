import type { CaseResult } from './runner';
import type { TestCase } from './case-schema';

/**
 * Runs cases against the hub's workflows with one of them replaced by a draft (the Web UI editor's
 * Tests panel, `POST /assistant/workflows/tests`), in a sandbox hub of its own: nothing the cases
 * do reaches the hub's sessions. Built by the composition root (src/compose/workflow-tests.ts).
 */
export interface WorkflowCaseRunner {
  /**
   * @param draft the workflow as edited (not necessarily saved), with its name
   * @param replaces the stored workflow the draft stands in for (its name before a rename), if any
   */
  run(draft: Record<string, unknown>, replaces: string | null, cases: readonly TestCase[]): Promise<CaseResult[]>;
}
