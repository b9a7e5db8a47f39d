#!/usr/bin/env node
// REST ingest A/B: CPU per answered `POST /sessions/{id}/messages` (the hub's /proc accounting) and
// answered/s, hubs from several builds driven in turn by one driver, so a machine shared with other
// work moves every side alike. Each argument is ROOT[:VARIANT]: ROOT a checkout with a built dist/
// (`.` for this one), VARIANT embedded (default), scaled or express. E.g.:
//   node scripts/bench-ab-ingest.js /tmp/before . .:express
// Environment: RUNS (5), SECONDS per run (3).
'use strict';
const path = require('node:path');

const here = path.resolve(__dirname, '..');
const env = (name, fallback) => Number(process.env[name] ?? fallback);
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

function parse(argument) {
  const [root, variant = 'embedded'] = argument.split(':');
  return { label: argument, root: path.resolve(root), variant };
}

async function main() {
  const sides = process.argv.slice(2).map(parse);
  if (sides.length === 0) throw new Error('usage: bench-ab-ingest.js ROOT[:VARIANT] ...');
  const { cpuDelta } = require(path.join(here, 'dist/bench/lib/hub-process.js'));
  const { postMessages } = require(path.join(here, 'dist/bench/ingest.js'));
  const hubs = [];
  try {
    for (const side of sides) {
      const { startHubProcess } = require(path.join(side.root, 'dist/bench/lib/hub-process.js'));
      const hub = await startHubProcess({ variant: side.variant });
      hubs.push({ hub, ids: (await hub.sessions(200)).ids });
    }
    for (const { hub, ids } of hubs) await postMessages(hub, ids, 2, 'warm-up');
    const results = sides.map(() => ({ cpu: [], rate: [], p99: [] }));
    for (let run = 0; run < env('RUNS', 5); run += 1) {
      for (const [index, { hub, ids }] of hubs.entries()) {
        const before = await hub.cpu();
        const started = process.hrtime.bigint();
        const load = await postMessages(hub, ids, env('SECONDS', 3), sides[index].label);
        const answers = (load.perSecond * Number(process.hrtime.bigint() - started)) / 1e9;
        results[index].cpu.push((cpuDelta(before, await hub.cpu()).total * 1e6) / answers);
        results[index].rate.push(load.perSecond);
        results[index].p99.push(load.p99Ms);
      }
    }
    for (const [index, side] of sides.entries()) {
      const { cpu, rate, p99 } = results[index];
      process.stdout.write(
        `${side.label}: CPU ${median(cpu).toFixed(0)} µs/answer (runs ${cpu.map((us) => us.toFixed(0)).join(', ')}), ${median(rate).toFixed(0)} answered/s, p99 ${median(p99)} ms\n`,
      );
    }
  } finally {
    await Promise.all(hubs.map(({ hub }) => hub.stop()));
  }
}

main().catch((error) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
