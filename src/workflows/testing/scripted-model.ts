import type { LlmProvider, ProviderChunk } from '../../agent/provider';
import type { ModelStep, TestCase } from './case-schema';

/**
 * The model of `switchboard workflows test`: each case's `model` script, played one round per
 * call. A round is the script's next run of `tool` steps (the calls of one model answer, run
 * together), or else its next `say` (streamed word by word, the turn's answer). A script that has
 * run out answers an empty text, which ends the turn. No key, no network.
 */
export class ScriptedModel implements LlmProvider {
  readonly name = 'scripted';
  readonly model = 'scripted';
  private steps: ModelStep[] = [];
  private callCount = 0;

  /** The script of the case that runs next. */
  use(testCase: Pick<TestCase, 'model'>): void {
    this.steps = [...(testCase.model ?? [])];
  }

  async *stream(): AsyncIterable<ProviderChunk> {
    let calls = 0;
    while (this.steps[0] && 'tool' in this.steps[0]) {
      const step = this.steps.shift() as Extract<ModelStep, { tool: string }>;
      calls += 1;
      yield { type: 'tool_call', call: { id: `scripted_${++this.callCount}`, name: step.tool, arguments: JSON.stringify(step.input ?? {}) } };
    }
    if (calls === 0) {
      const step = this.steps.shift();
      const text = step && 'say' in step ? step.say : '';
      for (const piece of text.match(/\s*\S+\s*/g) ?? []) yield { type: 'text', text: piece };
    }
    yield { type: 'usage', inputTokens: 0, outputTokens: calls };
  }
}
