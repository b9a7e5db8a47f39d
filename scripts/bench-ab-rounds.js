#!/usr/bin/env node
// CPU per turn of the embedded hub (its /proc accounting), like scripts/bench-ab-cpu.js, in many short
// rounds: each round runs every side in turn (order reversed every other round) on fresh sessions
// made before the CPU is read, and the report gives each side's per-round ratio to the first side
// (median and quartiles), which a machine shared with other work moves far less than the absolute
// figures. Each argument is [ROOT:]MODEL as there, e.g.
//   node scripts/bench-ab-rounds.js /tmp/before:openai openai in-process
// Environment: ROUNDS (12), TURNS per socket per round (10), SOCKETS (64), WARM rounds (3).
'use strict';
const path = require('node:path');

const here = path.resolve(__dirname, '..');
const env = (name, fallback) => Number(process.env[name] ?? fallback);
const quantile = (values, fraction) => [...values].sort((a, b) => a - b)[Math.floor(values.length * fraction)];

function parse(argument) {
  const at = argument.lastIndexOf(':');
  return { label: argument, root: at > 0 ? path.resolve(argument.slice(0, at)) : here, model: at > 0 ? argument.slice(at + 1) : argument };
}

async function main() {
  const sides = process.argv.slice(2).map(parse);
  if (sides.length === 0) throw new Error('usage: bench-ab-rounds.js [ROOT:]MODEL ...');
  const { cpuDelta } = require(path.join(here, 'dist/bench/lib/hub-process.js'));
  const { driveTurns } = require(path.join(here, 'dist/bench/lib/turn-driver.js'));
  const hubs = [];
  try {
    for (const side of sides) {
      const { startHubProcess } = require(path.join(side.root, 'dist/bench/lib/hub-process.js'));
      hubs.push(await startHubProcess({ variant: 'embedded', answerTokens: env('TOKENS', 20), model: side.model }));
    }
    const urls = async (hub) => (await hub.sessions(env('SOCKETS', 64))).urls;
    for (let round = 0; round < env('WARM', 3); round += 1) for (const hub of hubs) await driveTurns(await urls(hub), hub.headers, 5);
    const cpu = sides.map(() => []);
    for (let round = 0; round < env('ROUNDS', 12); round += 1) {
      const order = round % 2 === 0 ? [...hubs.keys()] : [...hubs.keys()].reverse();
      for (const index of order) {
        const hub = hubs[index];
        const sessions = await urls(hub);
        const before = await hub.cpu();
        const measured = await driveTurns(sessions, hub.headers, env('TURNS', 10));
        cpu[index].push((cpuDelta(before, await hub.cpu()).total * 1000) / measured.turns);
      }
    }
    for (const [index, side] of sides.entries()) {
      const ratios = cpu[index].map((ms, round) => ms / cpu[0][round]);
      process.stdout.write(
        `${side.label}: CPU ${quantile(cpu[index], 0.5).toFixed(3)} ms/turn (p25 ${quantile(cpu[index], 0.25).toFixed(3)}); ÷ ${sides[0].label} per round: ` +
          `${quantile(ratios, 0.5).toFixed(3)} (p25 ${quantile(ratios, 0.25).toFixed(3)}, p75 ${quantile(ratios, 0.75).toFixed(3)})\n`,
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
