/**
 * Where a long answer's CPU goes, process by process (not a benchmark: `node dist/bench/stream-cpu.js
 * [embedded|scaled] [in-process|openai|anthropic] [turns]`). Runs `token-stream`'s turn (one
 * 20,000-token answer on one socket, a fresh session each) three times to warm up, then `turns`
 * times, and prints the frames/s and the CPU µs per token frame of every process on the path, read
 * from /proc: the hub's (API, worker, PostgreSQL, Redis), the model server's and this driver's (the
 * client reading the frames). On two cores they all share the machine, so the rate follows their sum
 * more than any one of them; this split says which one to make cheaper.
 */
import { hubLabel, startHubProcess, type BenchModel } from './lib/hub-process';
import { processCpuSeconds } from './lib/proc-cpu';
import { hubTurn, TOKEN_STREAM_BENCH } from './token-stream';

async function main(): Promise<void> {
  const [kind = 'scaled', model = 'openai', turnsArgument = '8'] = process.argv.slice(2);
  if (kind !== 'embedded' && kind !== 'scaled') throw new Error(`kind must be embedded or scaled, not ${kind}`);
  const turns = Number(turnsArgument);
  const hub = await startHubProcess({ variant: kind, answerTokens: TOKEN_STREAM_BENCH.tokensPerTurn, model: model as BenchModel });
  try {
    for (let warmUp = 0; warmUp < 3; warmUp += 1) await hubTurn(hub);
    const modelCpu = () => (hub.modelServerPid ? processCpuSeconds(hub.modelServerPid) : 0);
    const driverCpu = () => processCpuSeconds(process.pid);
    const before = { hub: await hub.cpu(), model: modelCpu(), driver: driverCpu() };
    let frames = 0;
    let seconds = 0;
    for (let turn = 0; turn < turns; turn += 1) {
      const stream = await hubTurn(hub);
      frames += stream.frames;
      seconds += stream.seconds;
    }
    const after = { hub: await hub.cpu(), model: modelCpu(), driver: driverCpu() };
    const perFrame = (used: number) => `${((used * 1e6) / frames).toFixed(2)} µs`;
    const parts = Object.entries(after.hub).map(([part, used]) => `${part} ${perFrame(used - (before.hub[part] ?? 0))}`);
    if (hub.modelServerPid) parts.push(`model server ${perFrame(after.model - before.model)}`);
    parts.push(`this driver ${perFrame(after.driver - before.driver)}`);
    console.log(
      `${hubLabel(kind, model as BenchModel)}: ${Math.round(frames / seconds)} token frames/s over ${turns} turns; CPU per frame: ${parts.join(', ')}`,
    );
  } finally {
    await hub.stop();
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
