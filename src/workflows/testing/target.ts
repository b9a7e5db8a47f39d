import type { RouteReasonName, TestCase } from './case-schema';

/** What the router decided for a case's message. */
export interface RoutingAnswer {
  /** The workflow's name; null: the config default. */
  workflow: string | null;
  reason: RouteReasonName;
  /** The rule that decided, in a sentence (the routing test box's), when the target says it. */
  rule?: string;
}

/** One tool call of a turn, as its `tool_end` frame reported it. */
export interface ToolCallSeen {
  name: string;
  /** null: the tool ran and succeeded; else why it did not (refused, denied, failed). */
  error: string | null;
}

/** What a case's turn did. */
export interface TurnAnswer {
  /** How it ended: `done`, or `error <CODE>: <message>`, `cancelled`, … */
  ending: string;
  /** From the `done` frame (null when it did not end with `done`). */
  workflow: string | null;
  reason: string | null;
  tools: ToolCallSeen[];
  /** The tools a confirmation was asked for, in order. */
  confirmations: string[];
  reply: string;
}

/**
 * Where cases run: the offline hub of `switchboard workflows test` (src/compose/workflow-test-hub.ts)
 * or a live hub (`--against`, src/cli/workflow-tests/remote-target.ts). The runner only compares.
 */
export interface CaseTarget {
  /** For the report's first line: what the cases run against. */
  readonly description: string;
  /** The workflows the target has, by name. */
  workflowNames(): Promise<string[]>;
  route(testCase: TestCase): Promise<RoutingAnswer>;
  /** Runs the case's message as a turn (only for cases with a `model` script). */
  runTurn(testCase: TestCase): Promise<TurnAnswer>;
  close(): Promise<void>;
}
