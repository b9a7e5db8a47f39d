/**
 * A hub process for benchmarks that measure from outside (CPU per turn, SIGKILL takeover): the
 * same `startService` / `startWorkerProcess` as `npm start` / `npm run worker`, with a model that
 * answers `BENCH_ANSWER_TOKENS` tokens (`BENCH_TOKEN_DELAY_MS` apart; 0: at once). Role from
 * `BENCH_ROLE` (`api`, default, or `worker`). Prints `bench hub ready <port>` when it serves.
 * With SERVICE_LLM_PROVIDER set (the real-path hubs: `openai`, `anthropic` against
 * bench/lib/model-server-entry.ts) the hub builds its provider from its configuration, as `npm start` does.
 */
import { runProcess, startService, startWorkerProcess } from '../../src/main';
import { FixedAnswerProvider, wordTokens } from './models';

const tokens = wordTokens(Number(process.env.BENCH_ANSWER_TOKENS ?? '20'));
// With BENCH_ANNOUNCE_TURNS=1 the process says when its model starts an answer (which worker runs a turn).
const announce = process.env.BENCH_ANNOUNCE_TURNS === '1' ? () => void process.stdout.write('bench model answering\n') : undefined;
const realModel = process.env.SERVICE_LLM_PROVIDER !== undefined;
const provider = realModel ? undefined : new FixedAnswerProvider(tokens, Number(process.env.BENCH_TOKEN_DELAY_MS ?? '0'), announce);
const start = process.env.BENCH_ROLE === 'worker' ? startWorkerProcess : startService;

void runProcess(
  async (options) => {
    const service = await start(options);
    // With metrics on a port of their own (SERVICE_METRICS_PORT), the line names it too.
    process.stdout.write(`bench hub ready ${service.port}${service.metricsPort === null ? '' : ` metrics ${service.metricsPort}`}\n`);
    return service;
  },
  provider ? { provider } : {},
);
