import { z } from 'zod';
import { AppError } from '../../core/errors';
import { parseCaseFile } from '../../workflows/testing/case-files';
import type { WorkflowCaseRunner } from '../../workflows/testing/case-runner';
import { WORKFLOW_NAME } from '../../workflows/workflow-schema';
import type { ApiModule } from '../app';

/** The largest test file the editor may send (about 500 short cases). */
const MAX_CASES_CHARS = 256_000;

const bodySchema = z.strictObject({
  workflow: z
    .record(z.string(), z.unknown())
    .describe('The workflow as edited (the fields of a workflow file); it stands in for the stored one while the cases run.'),
  replaces: z
    .string()
    .regex(WORKFLOW_NAME)
    .nullable()
    .default(null)
    .describe('The stored workflow the draft replaces (its name before a rename); null for a new one.'),
  cases: z.string().min(1).max(MAX_CASES_CHARS).describe('The cases, as a workflows/tests/*.yaml file.'),
});

const caseResultSchema = z.object({
  name: z.string(),
  passed: z.boolean(),
  failures: z.array(z.string()),
  routing: z.object({ workflow: z.string().nullable(), reason: z.string(), rule: z.string().nullable() }).nullable(),
  turn: z
    .object({
      ending: z.string(),
      workflow: z.string().nullable(),
      tools: z.array(z.object({ name: z.string(), error: z.string().nullable() })),
      reply: z.string(),
    })
    .nullable(),
  duration_ms: z.number().int(),
});

const resultSchema = z.object({ passed: z.number().int(), failed: z.number().int(), cases: z.array(caseResultSchema) }).meta({ id: 'WorkflowTestRun' });

/**
 * `POST /assistant/workflows/tests`: runs test cases (the `workflows test` file format) on the hub's
 * workflows with the edited one in place, in a sandbox with the scripted model (docs/guides/testing-workflows.md).
 */
export function workflowTestRoutes(runner: WorkflowCaseRunner): ApiModule {
  return (api) =>
    api.add({
      method: 'post',
      path: '/assistant/workflows/tests',
      summary: 'Run workflow test cases against a draft of a workflow (a sandbox; nothing is saved)',
      description:
        'The cases are a workflows/tests/*.yaml file; they run offline, on a copy of the hub’s workflows with the draft in place, with the scripted model. ' +
        'One run at a time per process (409 while another runs).',
      tags: ['workflows'],
      access: 'admin',
      body: bodySchema,
      errors: ['CONFLICT'],
      response: { status: 200, description: 'Each case, passed or with its failures and the routing decision.', data: resultSchema },
      handler: async ({ body }) => {
        const name = typeof body.workflow.name === 'string' ? body.workflow.name : 'draft';
        const { cases, problems } = parseCaseFile(body.cases, `tests/${name}.yaml`);
        if (problems.length > 0) {
          throw new AppError('VALIDATION_ERROR', 'The test cases are not valid.', {
            details: { fields: { cases: problems.map((message) => ({ code: 'invalid_case', message })) } },
          });
        }
        if (cases.length === 0)
          throw new AppError('VALIDATION_ERROR', 'No test cases.', { details: { fields: { cases: [{ code: 'empty', message: 'Give at least one case.' }] } } });
        const results = await runner.run(body.workflow, body.replaces, cases);
        const passed = results.filter((result) => result.failures.length === 0).length;
        return {
          passed,
          failed: results.length - passed,
          cases: results.map((result) => ({
            name: result.testCase.name,
            passed: result.failures.length === 0,
            failures: result.failures,
            routing: result.routing ? { workflow: result.routing.workflow, reason: result.routing.reason, rule: result.routing.rule ?? null } : null,
            turn: result.turn ? { ending: result.turn.ending, workflow: result.turn.workflow, tools: result.turn.tools, reply: result.turn.reply } : null,
            duration_ms: result.durationMs,
          })),
        };
      },
    });
}
