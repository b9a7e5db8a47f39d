import { readFile, writeFile } from 'node:fs/promises';
import { z } from 'zod';
import type { LlmProvider, ProviderChunk, ProviderRequest } from '../../agent/provider';

/**
 * `--model record FILE` / `--model replay FILE`: a real model's answers, recorded once per case
 * (every round's chunks), then replayed in CI without a key. The file is JSON, keyed by case id
 * (`<file>#<case name>`), so renaming a case or a file needs a new recording.
 */
export const TAPE_VERSION = 1;

const chunkSchema = z.union([
  z.object({ type: z.literal('text'), text: z.string() }),
  z.object({ type: z.literal('tool_call'), call: z.object({ id: z.string(), name: z.string(), arguments: z.string() }) }),
  z.object({ type: z.literal('usage'), inputTokens: z.number(), outputTokens: z.number() }),
]);
const tapeSchema = z.object({ version: z.literal(TAPE_VERSION), model: z.string(), cases: z.record(z.string(), z.array(z.array(chunkSchema))) });
export type ModelTape = z.infer<typeof tapeSchema>;

export class TapeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TapeError';
  }
}

export async function readTape(file: string): Promise<ModelTape> {
  const text = await readFile(file, 'utf8').catch(() => {
    throw new TapeError(`${file}: no such recording (make one with --model record ${file})`);
  });
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new TapeError(`${file}: not a model recording (invalid JSON)`);
  }
  const parsed = tapeSchema.safeParse(json);
  if (!parsed.success) throw new TapeError(`${file}: not a model recording of version ${TAPE_VERSION}: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
  return parsed.data;
}

export async function writeTape(file: string, tape: ModelTape): Promise<void> {
  await writeFile(file, `${JSON.stringify(tape, null, 2)}\n`);
}

/** Passes a real model's answers through and keeps them per case. */
export class RecordingModel implements LlmProvider {
  readonly name: string;
  readonly model: string;
  readonly tape: ModelTape;
  private rounds: ProviderChunk[][] = [];

  constructor(private readonly inner: LlmProvider) {
    this.name = inner.name;
    this.model = inner.model;
    this.tape = { version: TAPE_VERSION, model: `${inner.name}:${inner.model}`, cases: {} };
  }

  /** The case that runs next: its rounds are recorded under `caseId`. */
  use(caseId: string): void {
    this.rounds = [];
    this.tape.cases[caseId] = this.rounds;
  }

  async *stream(request: ProviderRequest): AsyncIterable<ProviderChunk> {
    const round: ProviderChunk[] = [];
    this.rounds.push(round);
    for await (const chunk of this.inner.stream(request)) {
      round.push(chunk);
      yield chunk;
    }
  }
}

/** Answers each case with the rounds recorded for it, in order. */
export class ReplayModel implements LlmProvider {
  readonly name = 'replay';
  readonly model: string;
  private rounds: ProviderChunk[][] = [];

  constructor(
    private readonly tape: ModelTape,
    private readonly file: string,
  ) {
    this.model = tape.model;
  }

  /** @throws TapeError when the recording has no such case. */
  use(caseId: string): void {
    const rounds = this.tape.cases[caseId];
    if (!rounds) throw new TapeError(`${this.file} has no recording of this case (record it with --model record ${this.file})`);
    this.rounds = rounds.map((round) => [...round]);
  }

  async *stream(): AsyncIterable<ProviderChunk> {
    const round = this.rounds.shift();
    if (!round) throw new TapeError(`${this.file}: the turn asked the model more often than the recording answered`);
    yield* round;
  }
}
