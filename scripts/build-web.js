#!/usr/bin/env node
// Builds the browser UI (web/) into dist/web with Vite, unless nothing it is built from changed
// since the last build: `npm start` runs this every time, and a skipped build costs ~50 ms.
// Inputs hashed: every file under web/ and src/protocol/ (the wire protocol the UI bundles) except
// tests, and package-lock.json (library versions).
// `--force` builds anyway.
'use strict';
const { createHash } = require('node:crypto');
const { spawnSync } = require('node:child_process');
const { existsSync, readdirSync, readFileSync, writeFileSync } = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const webDir = path.join(root, 'web');
const protocolDir = path.join(root, 'src', 'protocol');
const outDir = path.join(root, 'dist', 'web');
const stampFile = path.join(outDir, '.build-stamp');

function* sourceFiles(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    if (entry.name === 'node_modules' || entry.name.startsWith('.')) continue;
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) yield* sourceFiles(full);
    else if (!/\.test\.tsx?$/.test(entry.name)) yield full;
  }
}

function inputsHash() {
  const hash = createHash('sha256');
  for (const file of [...sourceFiles(webDir), ...sourceFiles(protocolDir), path.join(root, 'package-lock.json')]) {
    hash.update(path.relative(root, file)).update('\0').update(readFileSync(file)).update('\0');
  }
  if (process.env.SWITCHBOARD_API_URL) hash.update(`api:${process.env.SWITCHBOARD_API_URL}`);
  if (process.env.SWITCHBOARD_DOCS_URL) hash.update(`docs:${process.env.SWITCHBOARD_DOCS_URL}`);
  return hash.digest('hex');
}

const force = process.argv.includes('--force');
const hash = inputsHash();
const upToDate = existsSync(path.join(outDir, 'index.html')) && existsSync(stampFile) && readFileSync(stampFile, 'utf8').trim() === hash;
if (upToDate && !force) process.exit(0);

const vite = path.join(root, 'node_modules', 'vite', 'bin', 'vite.js');
if (!existsSync(vite)) {
  process.stderr.write('build-web: vite is not installed; run `npm install` first\n');
  process.exit(1);
}
process.stdout.write('Building the Web UI (web/ → dist/web, once: later starts reuse it until web/ changes) …\n');
const started = Date.now();
const result = spawnSync(process.execPath, [vite, 'build', '--config', path.join(webDir, 'vite.config.mts'), '--logLevel', 'warn'], {
  cwd: root,
  stdio: 'inherit',
  // Vite makes a development bundle under any other NODE_ENV (jest sets `test`).
  env: { ...process.env, NODE_ENV: 'production' },
});
if (result.status !== 0) process.exit(result.status ?? 1);
writeFileSync(stampFile, `${hash}\n`);
process.stdout.write(`Built the Web UI in ${((Date.now() - started) / 1000).toFixed(1)} s.\n`);
