import { z } from 'zod';
import { CONFIRM_ACTIONS } from '../../protocol/confirm-actions';
import { BINDING_CHANNEL } from '../../core/channel';
import { WORKFLOW_NAME } from '../workflow-schema';
import { ROUTE_REASONS } from '../../routing/router';

/** Limits of a test file: a case is one message, as long as a user message may be (spec, Limits). */
export const CASE_LIMITS = {
  maxMessageChars: 65_536,
  maxCasesPerFile: 500,
  maxModelSteps: 50,
};

/** Why the router picked a workflow (decisions.md §4), as `done.routing_reason` and the routing test box say it: the router's own set. */
export { ROUTE_REASONS };
export type RouteReasonName = (typeof ROUTE_REASONS)[number];

/** One step of the scripted model: call a tool (with `input`, default `{}`), or say something. */
export const modelStepSchema = z.union([
  z.strictObject({ tool: z.string().min(1).max(200), input: z.record(z.string(), z.unknown()).optional() }),
  z.strictObject({ say: z.string().max(CASE_LIMITS.maxMessageChars) }),
]);
export type ModelStep = z.infer<typeof modelStepSchema>;

const expectSchema = z.strictObject({
  /** The workflow that should answer; null: the config default (no workflow). */
  workflow: z.union([z.string().regex(WORKFLOW_NAME, 'a workflow name (slug)'), z.null()]),
  reason: z.enum(ROUTE_REASONS).optional(),
  /** The tools that ran (tool_end without an error), in order. */
  tools: z.array(z.string().min(1)).optional(),
  /** How to answer every confirmation the turn asks for. */
  confirm: z.enum(CONFIRM_ACTIONS).optional(),
  /** Pieces the reply must contain (case-sensitive). */
  reply_contains: z.array(z.string().min(1)).optional(),
});

/** One case of a `workflows/tests/*.yaml` file (docs/guides/testing-workflows.md). */
export const testCaseSchema = z
  .strictObject({
    name: z.string().trim().min(1).max(200),
    message: z.string().min(1).max(CASE_LIMITS.maxMessageChars),
    channel: z.string().regex(BINDING_CHANNEL, '`<channel>` or `<channel>:<id>`').default('web'),
    contact_tags: z.array(z.string().trim().min(1).max(64)).max(100).default([]),
    model: z.array(modelStepSchema).min(1).max(CASE_LIMITS.maxModelSteps).optional(),
    expect: expectSchema,
  })
  .superRefine((value, context) => {
    const turnOnly = (['tools', 'confirm', 'reply_contains'] as const).filter((field) => value.expect[field] !== undefined);
    if (!value.model && turnOnly.length > 0) {
      context.addIssue({
        code: 'custom',
        path: ['expect', turnOnly[0]!],
        message: 'needs a `model` script: only a case that runs a turn has tools, confirmations and a reply',
      });
    }
  });

export type TestCaseInput = z.input<typeof testCaseSchema>;
export type ParsedCase = z.infer<typeof testCaseSchema>;

/** A case with where it came from: the file and its position (1-based) in it. */
export interface TestCase extends ParsedCase {
  file: string;
  index: number;
  /** `<file>#<name>`: unique within a run, names the case in reports and model recordings. */
  id: string;
}

/** Whether a case runs a turn (it has a model script) or only checks routing. */
export function runsTurn(testCase: Pick<ParsedCase, 'model'>): boolean {
  return testCase.model !== undefined;
}
