/**
 * A worker-only process for the `turns` benchmark: the same `startWorkerProcess` as
 * `dist/src/worker-main.js`, with a model that answers `BENCH_ANSWER_TOKENS` tokens at once (the
 * builtin model's answers are longer and vary with the conversation).
 */
import { runProcess, startWorkerProcess } from '../../src/main';
import { FixedAnswerProvider, wordTokens } from './models';

void runProcess(startWorkerProcess, { provider: new FixedAnswerProvider(wordTokens(Number(process.env.BENCH_ANSWER_TOKENS ?? '20'))) });
