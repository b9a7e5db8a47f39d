import type { LlmProvider, ProviderChunk, ProviderRequest, ToolCall } from '../../src/agent/provider';

/** One scripted model response: text pieces, then tool calls. */
export interface ScriptedRound {
  text?: string[];
  calls?: ToolCall[];
}

/**
 * A model whose output the test controls: it streams the given pieces, and can pause before any
 * piece until the test lets it go, or fail there. It stands in for the LLM (an external service);
 * everything else in the pipeline is the real code.
 */
export class ScriptedProvider implements LlmProvider {
  readonly name = 'scripted';
  readonly model = 'scripted-1';
  pieces: string[] = ['Hello', ' there', ', friend', '.'];
  /** Index of the piece before which the stream waits for `release()`; null streams straight through. */
  pauseBefore: number | null = null;
  /** Index of the piece at which the stream throws. */
  failAt: number | null = null;
  /** What it throws there (default: a plain Error, an "unrecoverable exception"). */
  failWith: Error | null = null;
  requests: ProviderRequest[] = [];
  /** Responses for the next calls, in order; when empty, `pieces` is answered. */
  rounds: ScriptedRound[] = [];
  private gate: { promise: Promise<void>; open: () => void } = ScriptedProvider.newGate();
  private reachedPause: { promise: Promise<void>; open: () => void } = ScriptedProvider.newGate();

  async *stream(request: ProviderRequest): AsyncIterable<ProviderChunk> {
    this.requests.push({ ...request, messages: [...request.messages] });
    const round = this.rounds.shift();
    if (round) {
      for (const piece of round.text ?? []) yield { type: 'text', text: piece };
      for (const call of round.calls ?? []) yield { type: 'tool_call', call };
      yield { type: 'usage', inputTokens: 7, outputTokens: (round.text ?? []).length + (round.calls ?? []).length };
      return;
    }
    for (const [index, piece] of this.pieces.entries()) {
      if (index === this.pauseBefore) {
        this.reachedPause.open();
        await Promise.race([this.gate.promise, aborted(request.signal)]);
      }
      if (request.signal.aborted) return;
      if (index === this.failAt) throw this.failWith ?? new Error('the model exploded (scripted)');
      yield { type: 'text', text: piece };
    }
    yield { type: 'usage', inputTokens: 11, outputTokens: this.pieces.length };
  }

  /** Resolves once a stream is waiting at `pauseBefore`. */
  paused(): Promise<void> {
    return this.reachedPause.promise;
  }

  release(): void {
    this.gate.open();
    this.gate = ScriptedProvider.newGate();
    this.reachedPause = ScriptedProvider.newGate();
  }

  private static newGate() {
    let open!: () => void;
    const promise = new Promise<void>((resolve) => (open = resolve));
    return { promise, open };
  }
}

function aborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    signal.addEventListener('abort', () => resolve(), { once: true });
  });
}
