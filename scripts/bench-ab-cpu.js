#!/usr/bin/env node
// CPU per turn of the embedded hub (its /proc accounting), builds and models interleaved in one driver,
// so a machine shared with other work moves every side alike. Each argument is [ROOT:]MODEL: ROOT a
// checkout with a built dist/ (`node scripts/build-server.js` there; default this one), MODEL in-process,
// openai or anthropic. E.g. (the "before" a `git archive <commit>` into /tmp/before, node_modules linked):
//   node scripts/bench-ab-cpu.js /tmp/before:openai openai in-process
// Environment: RUNS (3), TURNS per socket (20), SOCKETS (64), TOKENS per answer (20).
'use strict';
const path = require('node:path');

const here = path.resolve(__dirname, '..');
const env = (name, fallback) => Number(process.env[name] ?? fallback);

function parse(argument) {
  const at = argument.lastIndexOf(':');
  const root = at > 0 ? path.resolve(argument.slice(0, at)) : here;
  return { label: argument, root, model: at > 0 ? argument.slice(at + 1) : argument };
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

async function main() {
  const sides = process.argv.slice(2).map(parse);
  if (sides.length === 0) throw new Error('usage: bench-ab-cpu.js [ROOT:]MODEL ...');
  const { cpuDelta } = require(path.join(here, 'dist/bench/lib/hub-process.js'));
  const { driveTurns } = require(path.join(here, 'dist/bench/lib/turn-driver.js'));
  const hubs = [];
  try {
    for (const side of sides) {
      const { startHubProcess } = require(path.join(side.root, 'dist/bench/lib/hub-process.js'));
      hubs.push(await startHubProcess({ variant: 'embedded', answerTokens: env('TOKENS', 20), model: side.model }));
    }
    const turn = async (hub, turns) => driveTurns((await hub.sessions(env('SOCKETS', 64))).urls, hub.headers, turns);
    for (const hub of hubs) await turn(hub, 5); // warm-up
    const results = sides.map(() => ({ cpu: [], rate: [] }));
    for (let run = 0; run < env('RUNS', 3); run += 1) {
      for (const [index, hub] of hubs.entries()) {
        const before = await hub.cpu();
        const measured = await turn(hub, env('TURNS', 20));
        results[index].cpu.push((cpuDelta(before, await hub.cpu()).total * 1000) / measured.turns);
        results[index].rate.push(measured.turns / measured.seconds);
      }
    }
    for (const [index, side] of sides.entries()) {
      const { cpu, rate } = results[index];
      process.stdout.write(
        `${side.label}: CPU ${median(cpu).toFixed(3)} ms/turn (runs ${cpu.map((ms) => ms.toFixed(2)).join(', ')}), ${median(rate).toFixed(0)} turns/s\n`,
      );
    }
  } finally {
    await Promise.all(hubs.map((hub) => hub.stop()));
  }
}

main().catch((error) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
