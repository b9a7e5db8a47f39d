import { runsTurn, type TestCase } from './case-schema';
import type { CaseTarget, RoutingAnswer, TurnAnswer } from './target';

/** One case's result: failures empty means it passed. */
export interface CaseResult {
  testCase: TestCase;
  routing: RoutingAnswer | null;
  turn: TurnAnswer | null;
  failures: string[];
  durationMs: number;
}

/** Runs every case on `target`, one after the other (a case's session never sees another's). */
export async function runCases(cases: readonly TestCase[], target: CaseTarget, onResult?: (result: CaseResult) => void): Promise<CaseResult[]> {
  const names = new Set(await target.workflowNames());
  const results: CaseResult[] = [];
  for (const testCase of cases) {
    const started = performance.now();
    const result: CaseResult = { testCase, routing: null, turn: null, failures: [], durationMs: 0 };
    try {
      await runCase(testCase, target, names, result);
    } catch (error) {
      result.failures.push(`could not run: ${error instanceof Error ? error.message : String(error)}`);
    }
    result.durationMs = Math.round(performance.now() - started);
    results.push(result);
    onResult?.(result);
  }
  return results;
}

async function runCase(testCase: TestCase, target: CaseTarget, names: ReadonlySet<string>, result: CaseResult): Promise<void> {
  const expected = testCase.expect;
  if (expected.workflow !== null && !names.has(expected.workflow)) {
    const known = [...names].sort();
    result.failures.push(`expected workflow "${expected.workflow}" does not exist (workflows: ${known.length > 0 ? known.join(', ') : 'none'})`);
    return;
  }
  result.routing = await target.route(testCase);
  result.failures.push(...routingFailures(testCase, result.routing));
  if (!runsTurn(testCase)) return;
  result.turn = await target.runTurn(testCase);
  result.failures.push(...turnFailures(testCase, result.turn));
}

export function routingFailures(testCase: TestCase, routing: RoutingAnswer): string[] {
  const failures: string[] = [];
  const { workflow, reason } = testCase.expect;
  if (routing.workflow !== workflow) {
    failures.push(`routed to ${label(routing.workflow)} (${routing.reason}), expected ${label(workflow)}${routing.rule ? `: ${routing.rule}` : ''}`);
  } else if (reason && routing.reason !== reason) {
    failures.push(`routed to ${label(workflow)} by ${routing.reason}, expected by ${reason}`);
  }
  return failures;
}

export function turnFailures(testCase: TestCase, turn: TurnAnswer): string[] {
  const failures: string[] = [];
  const expected = testCase.expect;
  // `confirm: cancel` cancels the turn: that ending is the one the case asks for (no `done` to compare).
  const cancelledOnPurpose = expected.confirm === 'cancel' && turn.ending === 'cancelled';
  if (!cancelledOnPurpose && turn.ending !== 'done') failures.push(`the turn ended with ${turn.ending}`);
  else if (!cancelledOnPurpose && turn.workflow !== expected.workflow) {
    failures.push(`the turn was answered by ${label(turn.workflow)} (${turn.reason ?? '?'}), expected ${label(expected.workflow)}`);
  }
  if (turn.confirmations.length > 0 && !expected.confirm) {
    failures.push(`a confirmation was asked for ${turn.confirmations.join(', ')} and the case gives no expect.confirm (denied)`);
  }
  if (expected.tools) {
    const ran = turn.tools.filter((call) => call.error === null).map((call) => call.name);
    if (JSON.stringify(ran) !== JSON.stringify(expected.tools)) {
      const notRun = turn.tools.filter((call) => call.error !== null).map((call) => `${call.name}: ${call.error}`);
      failures.push(`tools ran [${ran.join(', ')}], expected [${expected.tools.join(', ')}]${notRun.length > 0 ? ` (not run: ${notRun.join('; ')})` : ''}`);
    }
  }
  for (const piece of expected.reply_contains ?? []) {
    if (!turn.reply.includes(piece)) failures.push(`the reply does not contain ${JSON.stringify(piece)}: ${JSON.stringify(shorten(turn.reply, 160))}`);
  }
  return failures;
}

/** A workflow name as reports show it: `"name"`, or `the default` for null. */
export function label(workflow: string | null): string {
  return workflow === null ? 'the default' : `"${workflow}"`;
}

function shorten(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
